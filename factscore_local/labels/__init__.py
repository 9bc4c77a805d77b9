"""labels"""

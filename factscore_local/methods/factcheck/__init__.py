"""methods/factcheck"""

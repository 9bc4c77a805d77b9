"""methods/veriscore"""

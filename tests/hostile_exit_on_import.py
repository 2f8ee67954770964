import sys

sys.exit(0)  # a module that ends the process when imported


def model():
    pass

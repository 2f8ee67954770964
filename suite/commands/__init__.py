"""One module per sub-command; each defines `add_parser(subparsers)` and sets `func` on its parser.

Modules here import torch and the rest lazily, inside `func`, so `suite --help` stays quick.
"""

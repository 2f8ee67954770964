"""Vendor modules handled with care: an optional module that is installed but broken is set aside before
torch imports it, and a module whose import changes the process is asked about in a fresh one."""

"""RRP Studio front ends: the ``rrp`` command line (and, later, the desktop app).
The physics lives in :mod:`engine`; nothing here computes it."""

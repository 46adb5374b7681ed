"""RRP Studio front ends: the ``rrp`` command line (:mod:`app.cli`) and the desktop app
(``rrp gui``: :mod:`app.gui`, with the 3D view of :mod:`app.scene`).
The physics lives in :mod:`engine`; nothing here computes it."""

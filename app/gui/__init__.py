"""The desktop app (PyQt6 + PyVista + pyqtgraph): ``rrp gui`` or :func:`launch.main`."""

"""Layerwise: the computations behind the book's chapters.

Modules: ``params`` (scales, validation), ``store`` (results cache), ``claims`` (ledger),
``plotting`` (figure style), ``chapter`` (what a notebook works through), ``data`` (data sets),
``book`` (execution pipeline), and one module per topic.
"""

__version__ = "0.1.0"

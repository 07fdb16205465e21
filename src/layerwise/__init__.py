"""Layerwise: the computations behind the book's chapters.

Modules: ``params`` (scales, validation), ``store`` (results cache), ``claims`` (ledger, outcomes,
scorecards), ``stats`` (means, standard errors, intervals, fits), ``gaussian`` (Gaussian
expectations), ``plotting`` (figure style) and ``figures`` (one function per figure), ``chapter``
(what a notebook works through), ``data`` (data sets), ``networks`` (MLPs of Chapters 6–8),
``moments`` (the engine of Chapters 3–5), ``published`` (the authors' published arrays of
Labatie 2019, vendored with their provenance), one module per topic (``capacity``, ``layer``,
``diffusion``, ``labatie``, ``regions``, ``meanfield``, ``infogeo``), and
the book's machinery: ``runner``, ``pages``, ``render``, ``dashboard``, ``book`` (command line).
"""

__version__ = "0.1.0"

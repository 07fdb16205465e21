"""The book's figures, one function per figure and one module per chapter (as the authors'
``plots.py`` of Labatie 2019 does): each takes the arrays a chapter computed and returns a
matplotlib Figure in the book's style (:mod:`layerwise.plotting`), at most
:data:`layerwise.chapter.MAX_FIGURE_WIDTH_IN` inches wide. Chapters call them and pass the figure
to ``Chapter.figure``; nothing here computes what a claim decides."""

"""Each chapter's study, one module per chapter beside :mod:`layerwise.figures`: the experiment
drivers and summaries that turn the science modules' functions
(by paper: :mod:`~layerwise.capacity`, :mod:`~layerwise.layer`, :mod:`~layerwise.diffusion`,
:mod:`~layerwise.labatie`, :mod:`~layerwise.regions`,
:mod:`~layerwise.meanfield`, :mod:`~layerwise.infogeo`) into the numbers, arrays and estimates a
chapter grades and plots. They return no sentences and know no claim ids: the chapter words its
conclusions."""

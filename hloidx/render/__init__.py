"""What every front end shows: the text, JSON documents and HTML of the command line, the
notebook and the language server, made from the analyses' results in one place.

``render`` imports the analyses and Rich (for styled lines), never Click and never a front
end: the CLI (:mod:`hloidx.cli`), the notebook (:mod:`hloidx.notebook`) and the language
server import it. :mod:`.plain` is the notebook's door: each command's text as one string.
"""

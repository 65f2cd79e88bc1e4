"""One script per chapter: ``python -m coursetools.chapters.<id>`` writes ``solutions/<id>/<id>.ipynb``."""

"""`python -m app.cli`: the same as the `lightrag-service` console script."""

from app.cli.main import main

main()

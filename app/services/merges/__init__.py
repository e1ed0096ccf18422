"""Review of entity resolution's automatic merges: the ledger (ledger.py) and their undoing from cached
extraction records (unmerge.py), on top of the graph curation, the deletion rebuild and name resolution."""

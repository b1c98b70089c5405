"""The stages, one module or package each, in data order: ingest, embed, cluster, label,
then metrics, compare, csv, export and render (quality: `make stability` and `make
baseline`). A stage meets the others only through its tables; the Makefile and
`pipeline.commands` hold the order."""

"""compbench's test plug-in: a strategy, an importer and a summarizer from outside the package."""

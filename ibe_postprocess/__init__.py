"""IBE-Eval (Dalal et al., 2024): score LLM explanations by consistency, parsimony, coherence
and uncertainty, and pick the best explanation of each question with a linear selector.

The lm-eval tasks in ``lm_eval_tasks/ibe`` (hooks in ``custom_metrics.ibe``) generate
the explanations; ``explain-eval ibe score`` turns their logged samples into features and
``explain-eval ibe report`` fits the selector (see the task README for the workflow).
Needs the ``ibe`` extra (SWI-Prolog via janus-swi, spaCy, sentence-transformers).

Two kinds of module live here. Light ones import only the standard library and
``custom_metrics.common``, so that the harness hooks and the leaderboard can use them
without the scorer's dependencies: ``parsing`` (the explanation parser), ``inputs`` (logged
explanations as records), ``questions``, ``folder`` (every file name), ``features_file``
and ``report_file`` (the files another command reads back), ``paper`` (Table 1). The
scorer's modules (``features``, ``prover``, ``nlp``, ``summary``, ``render``, ...) load
their heavy dependencies and are run by ``explain-eval ibe``. Nothing here imports
``custom_metrics.ibe``.
"""

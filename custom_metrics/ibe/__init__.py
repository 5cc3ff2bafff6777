"""IBE-Eval (Dalal et al., ACL 2024): the harness side. COPA and e-CARE as explanation
docs, the explanation and judge prompts, the explanation parser, format metrics, the
reader of logged explanations and the leaderboard spec. The feature scoring and the
selector are in ``ibe_postprocess``."""

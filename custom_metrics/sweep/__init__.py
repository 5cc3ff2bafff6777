"""Sweeps: every model x task pair through ``lm_eval``, resumable, then the leaderboard."""

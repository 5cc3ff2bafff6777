"""REG (Chan, Zhao & Gaizauskas, 2026): reconciliatory explanations of ChaosNLI
contradictions, judged twice by an NLI judge. Data, prompts, output parsing, judging,
metrics, the RL reward, the section 6 analysis and the leaderboard spec."""

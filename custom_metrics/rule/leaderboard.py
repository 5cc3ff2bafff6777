"""RULE on the leaderboard: the published rows of Tables 2, 3, 5, 6, 7, 8 and 9, the few-shot
setting rows, and how the page shows RULE (column words and definitions, logged samples).

± on published rows is the std over the five test splits printed in Tables 2, 6 and 8; the
paper also prints ±0.00 for its single-run settings (fine-tuned models, humans), which is
no spread at all, and for the zero-shot main questions, which the five splits share (0 by
construction), so those cells carry no ±.
The suite's few-shot split runs become one row per model and setting (shots, and ReClor,
RULE or chain-of-thought demonstrations) with the mean and population std over the splits,
as the protocol command computes them.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from custom_metrics.common.cot_edits import MISTAKE, PARAPHRASE, read_edit
from custom_metrics.common.leaderboard_types import Board, Family, Headline, SampleView, doc_field_key
from custom_metrics.common.paper_spec import PaperSpec, RunSteps, SamplesInput
from custom_metrics.common.published import PublishedCell, PublishedRow, cell, number, table_lines
from custom_metrics.common.results import Score, TaskRun
from custom_metrics.rule import cot_edits, zeroshot_cot
from custom_metrics.rule import data as rule_data
from custom_metrics.rule.answers import asked_question, read_answer
from custom_metrics.rule.data import DEMOS, demo_setting, fewshot_task
from custom_metrics.rule.metrics import MAIN, MAINQ_CORRECT, SUB_KINDS, Group, Outcome, groups

# Table 2, in percent: model | # params | MainQ | SubQ | Selective SubQ | Eliminative SubQ
# | Consistency | MainQ-wise SubQ. "±" is the standard deviation over the five test splits
# (few/zero-shot) and 0.00 for single-run settings; "## " lines name the setting.
RULE_TABLE_2 = """
## fully finetuned on ReClor
DeBERTa-v3-Large | 304M | 66.0±0.00 | 33.1±0.00 | 56.1±0.00 | 25.0±0.00 | 2.4 | 32.8
UnifiedQA-v2-Base | 220M | 40.5±0.00 | 25.8±0.00 | 21.3±0.00 | 27.4±0.00 | 0.7 | 26.0
UnifiedQA-v2-Large | 770M | 57.7±0.00 | 25.0±0.00 | 19.9±0.00 | 26.8±0.00 | 1.4 | 24.7
UnifiedQA-v2-3B | 3B | 66.8±0.00 | 25.3±0.00 | 21.8±0.00 | 26.6±0.00 | 1.4 | 25.2
## five-shot on ReClor
Vicuna 13B | 13B | 46.2±0.7 | 50.0±4.4 | 78.2±3.0 | 40.1±4.6 | 5.6 | 49.4
Flan-UL2 | 20B | 58.5±0.3 | 65.5±5.1 | 88.0±4.0 | 57.6±5.4 | 16.9 | 64.3
InstructGPT | N/A | 71.8±1.0 | 65.3±1.8 | 88.4±2.5 | 57.1±1.5 | 18.2 | 64.0
InstructGPT + CoT | N/A | 67.8±0.5 | 63.2±2.1 | 88.5±2.5 | 54.2±2.8 | 17.2 | 61.8
LLaMA2 13B | 13B | 48.5±2.5 | 44.6±3.2 | 75.3±3.4 | 33.8±4.0 | 5.3 | 44.7
LLaMA2 70B | 70B | 80.3±0.4 | 60.0±2.6 | 90.0±1.1 | 49.4±2.9 | 17.7 | 59.3
Mistral 7B | 7B | 59.9±0.9 | 55.3±3.4 | 83.6±3.4 | 45.4±3.6 | 9.0 | 54.4
## five-shot on RULE, for reference
Vicuna 13B | 13B | 43.9±1.3 | 44.2±2.7 | 72.6±2.6 | 34.2±2.6 | 4.1 | 44.0
Flan-UL2 | 20B | 57.9±0.2 | 66.0±4.9 | 87.7±4.6 | 58.4±5.0 | 17.8 | 64.9
InstructGPT | N/A | 70.2±0.4 | 70.1±2.3 | 90.0±3.5 | 63.0±2.0 | 23.1 | 69.2
LLaMA2 13B | 13B | 47.7±3.0 | 46.3±4.0 | 80.0±2.1 | 34.4±4.7 | 5.1 | 47.1
LLaMA2 70B | 70B | 78.9±0.6 | 64.0±4.8 | 90.6±2.5 | 54.6±5.5 | 21.1 | 63.5
Mistral 7B | 7B | 58.2±1.6 | 57.5±5.4 | 88.1±3.0 | 46.7±7.3 | 9.4 | 57.2
## zero-shot
UnifiedQA-v2-3B | 3B | 45.5±0.00 | 47.9±2.1 | 71.6±2.9 | 39.4±2.2 | 5.7 | 47.8
UnifiedQA-v2-11B | 11B | 55.2±0.00 | 57.3±2.7 | 74.8±5.2 | 51.1±2.7 | 9.7 | 56.5
Flan-T5-XXL | 11B | 60.0±0.00 | 64.3±4.0 | 86.2±5.4 | 56.5±3.3 | 14.7 | 63.4
Vicuna 13B | 13B | 44.2±0.00 | 49.5±2.7 | 77.1±1.7 | 39.7±2.7 | 6.2 | 49.4
Flan-UL2 | 20B | 56.2±0.00 | 65.7±5.2 | 84.5±4.4 | 59.1±5.1 | 14.7 | 64.2
InstructGPT | N/A | 64.1±0.00 | 62.8±2.2 | 89.9±2.0 | 53.2±2.1 | 15.5 | 61.8
InstructGPT+ CoT | N/A | 63.8±0.00 | 62.3±1.0 | 89.6±1.5 | 52.6±1.5 | 14.2 | 61.2
LLaMA2 13B | 13B | 43.8±0.00 | 44.4±3.0 | 75.3±3.1 | 33.5±2.5 | 4.7 | 44.5
LLaMA2 70B | 70B | 70.8±0.00 | 58.0±3.7 | 88.1±3.4 | 47.3±4.0 | 14.1 | 57.3
Mistral 7B | 7B | 54.0±0.00 | 55.9±3.2 | 85.9±2.0 | 45.3±3.6 | 8.6 | 55.0
## majority vote of three annotators
Human | - | 91.5±0.00 | 82.6±0.00 | 93.0±0.00 | 78.9±0.00 | 52.9 | 81.5
"""
# Table 6 (Appendix G): one-shot rows and more models, in Table 2's layout. It prints Table 2's
# Human row again (kept once) and its one-shot-on-RULE "InstructGPT + CoT" row holds the
# numbers of its one-shot-on-ReClor one, as printed.
RULE_TABLE_6 = """
## five-shot on ReClor
LLaMA 7B | 7B | 25.8±1.6 | 28.6±7.1 | 39.8±13.1 | 24.6±6.3 | 0.8 | 28.2
LLaMA 13B | 13B | 38.7±2.7 | 36.3±3.5 | 63.6±4.0 | 26.6±3.6 | 2.9 | 36.6
Vicuna 7B | 7B | 33.4±2.6 | 38.6±3.3 | 61.4±5.8 | 30.5±3.4 | 2.8 | 38.3
LLaMA2 7B | 7B | 36.4±2.1 | 35.2±3.9 | 63.6±6.5 | 25.1±3.2 | 1.7 | 35.6
## one-shot on ReClor
UnifiedQA-v2-Base | 220M | 27.4±1.4 | 34.7±6.4 | 42.8±7.7 | 31.9±6.2 | 0.7 | 34.6
UnifiedQA-v2-Large | 770M | 27.1±1.7 | 28.0±4.7 | 29.2±5.3 | 27.6±4.9 | 0.0 | 27.6
UnifiedQA-v2-3B | 3B | 31.3±3.2 | 26.2±2.8 | 26.0±9.8 | 26.2±1.4 | 0.3 | 26.1
UnifiedQA-v2-11B | 11B | 44.1±5.9 | 37.2±7.4 | 53.8±16.6 | 31.4±4.4 | 2.0 | 36.5
Flan-T5-XXL | 11B | 61.3±0.3 | 63.7±3.7 | 85.9±2.6 | 55.9±3.9 | 14.0 | 62.5
Flan-UL2 | 20B | 58.0±0.5 | 66.0±5.3 | 87.4±3.9 | 58.5±5.7 | 17.7 | 65.1
LLaMA 7B | 7B | 26.6±0.9 | 32.4±4.2 | 50.7±11.1 | 26.1±3.7 | 1.6 | 32.5
LLaMA 13B | 13B | 32.7±2.4 | 33.8±1.9 | 56.0±5.8 | 26.0±2.5 | 1.4 | 34.1
LLaMA 33B | 33B | 56.1±1.0 | 49.3±4.3 | 80.1±3.8 | 38.5±4.3 | 7.4 | 49.6
LLaMA 65B | 65B | 65.2±1.4 | 52.6±3.4 | 85.2±1.3 | 41.1±4.3 | 9.4 | 51.9
Vicuna 7B | 7B | 35.8±2.0 | 38.9±2.2 | 65.3±3.1 | 29.5±2.3 | 1.8 | 38.1
Vicuna 13B | 13B | 42.5±0.8 | 45.2±3.1 | 72.1±3.3 | 35.8±4.0 | 4.2 | 45.1
InstructGPT | N/A | 67.8±0.5 | 64.6±1.9 | 87.8±2.0 | 56.3±1.8 | 17.5 | 63.6
InstructGPT + CoT | N/A | 64.3±2.5 | 64.3±2.4 | 88.8±1.3 | 55.7±2.5 | 15.4 | 62.5
LLaMA2 7B | 7B | 35.0±1.1 | 34.8±2.4 | 61.7±4.2 | 25.2±2.6 | 2.2 | 35.2
LLaMA2 13B | 13B | 46.4±2.4 | 43.7±2.9 | 72.6±3.6 | 33.4±2.8 | 4.7 | 43.6
LLaMA2 70B | 70B | 77.2±0.2 | 61.3±0.7 | 90.0±1.4 | 51.2±1.2 | 20.0 | 61.0
Mistral 7B | 7B | 52.6±1.4 | 53.4±2.3 | 81.9±2.8 | 43.4±2.7 | 7.4 | 52.7
## five-shot on RULE, for reference
LLaMA 7B | 7B | 29.1±2.3 | 34.9±2.5 | 64.3±4.3 | 24.5±2.4 | 1.5 | 35.5
LLaMA 13B | 13B | 36.8±3.5 | 35.6±2.5 | 68.1±3.0 | 24.2±2.8 | 2.4 | 36.0
Vicuna 7B | 7B | 35.0±1.1 | 39.9±3.9 | 60.2±8.9 | 32.7±4.4 | 3.2 | 39.8
LLaMA2 7B | 7B | 37.8±1.1 | 32.0±4.4 | 62.3±6.5 | 21.1±3.4 | 1.5 | 32.4
## one-shot on RULE, for reference
UnifiedQA-v2-Base | 220M | 27.7±2.7 | 36.5±2.5 | 38.5±4.0 | 35.8±2.5 | 1.6 | 36.9
UnifiedQA-v2-Large | 770M | 28.3±1.4 | 27.4±1.2 | 27.4±10.2 | 27.4±3.0 | 1.0 | 27.7
UnifiedQA-v2-3B | 3B | 35.0±1.4 | 30.1±4.8 | 35.8±10.7 | 28.2±4.0 | 2.0 | 30.6
UnifiedQA-v2-11B | 11B | 42.6±7.1 | 37.4±11.7 | 47.5±17.7 | 33.9±9.7 | 3.1 | 38.0
Flan-T5-XXL | 11B | 60.6±0.5 | 64.1±3.6 | 85.8±3.1 | 56.5±3.9 | 14.0 | 63.2
Flan-UL2 | 20B | 57.6±0.4 | 66.0±4.5 | 87.4±3.8 | 58.5±4.7 | 17.2 | 64.9
LLaMA 7B | 7B | 28.2±2.4 | 32.9±2.5 | 48.3±8.1 | 27.4±4.1 | 1.6 | 33.6
LLaMA 13B | 13B | 30.0±3.2 | 32.9±1.3 | 50.9±4.3 | 26.6±1.8 | 1.7 | 33.4
LLaMA 33B | 33B | 53.3±3.2 | 48.4±4.5 | 79.7±3.4 | 37.3±4.7 | 6.0 | 48.4
LLaMA 65B | 65B | 62.8±3.4 | 52.8±6.0 | 84.9±4.4 | 41.5±6.5 | 7.5 | 52.0
Vicuna 7B | 7B | 34.7±1.8 | 41.2±2.4 | 65.3±6.4 | 32.6±3.3 | 3.4 | 41.2
Vicuna 13B | 13B | 40.7±2.3 | 41.7±1.6 | 67.3±4.8 | 32.7±1.8 | 3.5 | 41.8
InstructGPT | N/A | 65.4±1.9 | 66.5±1.3 | 89.0±0.8 | 58.5±1.2 | 19.5 | 65.5
InstructGPT + CoT | N/A | 64.3±2.5 | 64.3±2.4 | 88.8±1.3 | 55.7±2.5 | 15.4 | 62.5
LLaMA2 7B | 7B | 32.8±3.3 | 33.4±1.7 | 56.1±1.8 | 25.4±1.9 | 1.4 | 34.0
LLaMA2 13B | 13B | 45.0±5.5 | 40.9±2.9 | 70.6±4.4 | 30.3±2.6 | 2.8 | 41.1
LLaMA2 70B | 70B | 76.0±0.2 | 61.5±2.8 | 90.4±3.1 | 51.4±2.7 | 19.2 | 61.1
Mistral 7B | 7B | 50.8±1.1 | 53.8±3.3 | 84.0±3.7 | 43.2±3.6 | 6.5 | 54.0
## zero-shot
UnifiedQA-v2-Base | 220M | 30.4±0.00 | 42.2±1.0 | 48.5±2.9 | 39.9±1.3 | 2.7 | 41.7
UnifiedQA-v2-Large | 770M | 41.4±0.00 | 42.9±1.8 | 55.0±4.9 | 38.5±1.3 | 3.3 | 41.9
LLaMA 7B | 7B | 27.7±0.00 | 27.4±4.1 | 38.2±4.2 | 23.6±4.6 | 0.8 | 27.1
LLaMA 13B | 13B | 31.7±0.00 | 36.0±3.3 | 59.3±2.1 | 27.8±3.7 | 1.4 | 36.7
Vicuna 7B | 7B | 36.7±0.00 | 40.5±2.3 | 73.1±3.2 | 28.9±2.9 | 2.4 | 40.1
LLaMA2 7B | 7B | 32.3±0.00 | 35.9±3.9 | 66.4±4.7 | 25.1±3.4 | 2.5 | 36.3
## majority vote of three annotators
Human | - | 91.5±0.00 | 82.6±0.00 | 93.0±0.00 | 78.9±0.00 | 52.9 | 81.5
"""
# Table 8 (Appendix H): Table 2's layout over the main questions the model answered correctly:
# the subquestion columns, consistency and MainQ-wise SubQ accuracy among those main questions
# only (MainQ accuracy as in Table 2). Its sections are Table 2's (its Human row closes the
# zero-shot section); like Table 6 it gives the five-shot-on-RULE "InstructGPT + CoT" row the
# numbers of its five-shot-on-ReClor one (kept as printed).
RULE_TABLE_8 = """
## fully finetuned on ReClor
DeBERTa-v3-Large | 304M | 66.0±0.00 | 33.1±0.00 | 60.4±0.00 | 22.5±0.00 | 3.7 | 32.2
UnifiedQA-v2-Base | 220M | 40.5±0.00 | 25.8±0.00 | 19.7±0.00 | 26.7±0.00 | 1.8 | 25.0
UnifiedQA-v2-Large | 770M | 57.7±0.00 | 25.0±0.00 | 17.3±0.00 | 27.7±0.00 | 2.4 | 24.6
UnifiedQA-v2-3B | 3B | 66.8±0.00 | 25.3±0.00 | 19.9±0.00 | 25.7±0.00 | 2.1 | 24.1
## five-shot on ReClor
Flan-UL2 | 20B | 58.5±0.3 | 66.3±6.3 | 89.6±4.6 | 57.2±5.1 | 28.8 | 65.1
LLaMA 7B | 7B | 25.8±1.6 | 28.5±7.5 | 34.3±12.2 | 24.2±5.7 | 3.4 | 27.2
LLaMA 13B | 13B | 38.7±2.7 | 37.0±4.0 | 65.0±6.7 | 25.9±3.8 | 7.4 | 37.2
LLaMA 33B | 33B | 58.5±1.2 | 47.7±4.2 | 77.5±6.3 | 38.3±5.8 | 10.6 | 47.3
LLaMA 65B | 65B | 69.1±0.9 | 54.4±1.7 | 85.5±2.8 | 46.9±5.6 | 16.0 | 54.1
Vicuna 7B | 7B | 33.4±2.6 | 40.0±5.1 | 62.7±6.9 | 30.0±3.0 | 8.5 | 39.7
Vicuna 13B | 13B | 46.2±0.7 | 48.5±6.1 | 76.0±8.8 | 42.2±5.4 | 12.1 | 48.1
InstructGPT | N/A | 71.8±1.0 | 64.1±3.5 | 89.2±3.8 | 60.7±6.1 | 25.1 | 62.8
InstructGPT + CoT | N/A | 67.8±0.5 | 62.9±3.1 | 89.5±4.2 | 55.8±3.6 | 24.9 | 61.5
LLaMA2 13B | 13B | 48.5±2.5 | 45.8±4.2 | 79.1±4.0 | 33.1±5.2 | 11.1 | 45.8
LLaMA2 70B | 70B | 80.3±0.4 | 59.9±2.5 | 90.7±1.9 | 50.5±7.2 | 21.8 | 59.4
Mistral 7B | 7B | 59.9±0.9 | 54.7±4.4 | 84.5±2.8 | 46.8±2.8 | 15.0 | 53.7
## five-shot on RULE, for reference
Flan-UL2 | 20B | 57.9±0.2 | 67.2±6.2 | 89.4±4.4 | 57.1±3.6 | 30.9 | 66.2
LLaMA 7B | 7B | 29.1±2.3 | 34.6±3.2 | 66.2±8.0 | 23.7±1.3 | 5.4 | 34.9
LLaMA 13B | 13B | 36.8±3.5 | 35.1±3.2 | 67.4±5.3 | 24.4±2.6 | 6.6 | 35.0
LLaMA 33B | 33B | 53.6±0.4 | 48.5±6.0 | 78.5±5.9 | 36.8±5.4 | 10.6 | 47.6
LLaMA 65B | 65B | 66.2±0.7 | 57.2±5.1 | 86.4±3.1 | 53.7±10.3 | 18.3 | 56.0
Vicuna 7B | 7B | 35.0±1.1 | 40.3±3.1 | 61.4±8.8 | 32.4±4.8 | 9.5 | 40.8
Vicuna 13B | 13B | 43.9±1.3 | 43.9±2.6 | 73.0±3.1 | 34.2±3.7 | 9.4 | 43.4
InstructGPT | N/A | 70.2±0.4 | 70.2±3.5 | 91.0±4.6 | 64.3±2.4 | 32.7 | 69.3
InstructGPT + CoT | N/A | 67.8±0.5 | 62.9±3.1 | 89.5±4.2 | 55.8±3.6 | 24.9 | 61.5
LLaMA2 13B | 13B | 47.7±3.0 | 46.9±4.7 | 79.4±6.3 | 33.6±4.6 | 11.0 | 47.0
LLaMA2 70B | 70B | 78.9±0.6 | 63.7±4.2 | 90.8±2.5 | 55.2±9.2 | 26.5 | 63.0
Mistral 7B | 7B | 58.2±1.6 | 56.2±5.1 | 88.0±3.6 | 49.4±7.9 | 16.3 | 55.6
## zero-shot
UnifiedQA-v2-Base | 220M | 30.4±0.00 | 43.0±2.9 | 51.0±7.5 | 39.8±1.7 | 8.7 | 43.4
UnifiedQA-v2-Large | 770M | 41.4±0.00 | 43.9±4.1 | 59.9±7.6 | 39.0±2.7 | 7.9 | 42.5
UnifiedQA-v2-3B | 3B | 45.5±0.00 | 49.3±2.4 | 75.4±4.1 | 38.9±3.1 | 12.6 | 49.5
UnifiedQA-v2-11B | 11B | 55.2±0.00 | 56.8±2.9 | 77.6±7.1 | 53.0±3.8 | 17.5 | 55.9
Flan-T5-XXL | 11B | 60.0±0.00 | 63.2±3.4 | 87.3±4.8 | 59.2±4.6 | 24.6 | 62.7
Flan-UL2 | 20B | 56.2±0.00 | 65.3±5.9 | 86.0±4.8 | 60.5±4.7 | 26.2 | 63.7
LLaMA 7B | 7B | 27.7±0.00 | 27.0±4.5 | 37.5±2.8 | 23.6±3.9 | 3.1 | 26.9
LLaMA 13B | 13B | 31.7±0.00 | 35.5±3.0 | 55.9±4.0 | 27.5±3.8 | 4.3 | 35.9
LLaMA 33B | 33B | 54.5±0.00 | 50.2±4.6 | 81.8±4.3 | 41.4±5.5 | 12.5 | 50.2
LLaMA 65B | 65B | 52.1±0.00 | 47.5±2.2 | 80.1±2.5 | 38.0±5.4 | 10.4 | 46.6
Vicuna 7B | 7B | 36.7±0.00 | 40.8±2.8 | 77.5±2.8 | 29.4±2.8 | 6.6 | 40.3
Vicuna 13B | 13B | 44.2±0.00 | 48.9±4.8 | 76.9±3.4 | 40.4±1.8 | 13.9 | 48.2
InstructGPT | N/A | 64.1±0.00 | 61.9±2.9 | 89.8±2.9 | 55.8±3.6 | 24.2 | 60.8
InstructGPT + CoT | N/A | 63.8±0.00 | 60.9±1.4 | 89.1±2.4 | 55.9±3.2 | 22.3 | 59.7
LLaMA2 13B | 13B | 43.8±0.00 | 45.5±3.7 | 77.6±5.3 | 33.3±3.0 | 10.7 | 45.4
LLaMA2 70B | 70B | 70.8±0.00 | 57.2±4.0 | 88.2±3.2 | 49.9±5.4 | 19.9 | 56.3
Mistral 7B | 7B | 54.0±0.00 | 54.7±3.4 | 85.1±5.5 | 47.1±4.3 | 15.9 | 53.3
## majority vote of three annotators
Human | - | 91.5±0.00 | 82.9±0.00 | 92.8±0.00 | 79.3±0.00 | 57.8 | 81.6
"""
# Settings the paper ran once: their "±0.00" is no std at all.
SINGLE_RUN_SETTINGS = ("fully finetuned on ReClor", "majority vote of three annotators")
ZERO_SHOT = "zero-shot"
METRICS = (
    "mainq_acc",
    "subq_acc",
    "selective_acc",
    "eliminative_acc",
    "consistency",
    "mainq_wise_subq_acc",
)
# Table 8's columns: the same main-question accuracy, the others among the correctly answered
# main questions (``metrics.TABLE8_METRICS``, which every task scoring all of Table 2 reports).
TABLE_8_METRICS = ("mainq_acc", *(f"{metric}{MAINQ_CORRECT}" for metric in METRICS[1:]))
# "InstructGPT + CoT" is InstructGPT with chain-of-thought prompts: its own setting, so a CoT
# run compares with it and a plain run with plain InstructGPT.
_COT_MODEL = re.compile(r"^(?P<model>.+?)\s*\+\s*CoT$")
# The Appendix E split protocol: the few-shot rows are a mean over five runs, and each run of
# the suite leaves out the main questions its ReClor demonstrations show.
MAIN_QUESTIONS_NOTE = (
    "each run leaves out the main questions its ReClor demonstrations show (938 of 943 with five, 942 with "
    "one); the paper's Appendix E asks all 943 in every run"
)


def _table_rows(
    table: str,
    name: str,
    skip: frozenset[tuple[str, str]] = frozenset(),
    metrics: tuple[str, ...] = METRICS,
    suffix: str = "",
) -> list[PublishedRow]:
    """Rows of a transcribed table in Table 2's layout, its columns keyed by ``metrics``, each
    row's setting followed by ``suffix``; lines in ``skip`` (rows another table already holds)
    are left out."""
    rows, setting = [], ""
    for line in table.strip().splitlines():
        if line.startswith("## "):
            setting = line[3:]
            continue
        if (setting, line) in skip:
            continue
        model, params, *values = (cell.strip() for cell in line.split("|"))
        cells = {f"rule/{metric}": cell(text, percent=True) for metric, text in zip(metrics, values, strict=True)}
        if setting in SINGLE_RUN_SETTINGS:
            cells = {key: PublishedCell(value.value) for key, value in cells.items()}
        elif setting == ZERO_SHOT:  # the five splits share the main questions: their std is 0 by construction
            cells["rule/mainq_acc"] = PublishedCell(cells["rule/mainq_acc"].value)
        cot = _COT_MODEL.match(model)
        row_setting = (f"{setting}, CoT" if cot else setting) + suffix
        source = f"RULE (Kawabata & Sugawara, EMNLP 2023) {name}, {setting}; model printed as {model!r}; # params "
        source += f"{params}; ± = std over the 5 test splits"
        if setting.startswith(("five-shot", "one-shot")):
            source += f"; {MAIN_QUESTIONS_NOTE}"
        rows.append(PublishedRow("rule", cot["model"] if cot else model, source, cells, setting=row_setting))
    return rows


def _lines(table: str) -> frozenset[tuple[str, str]]:
    """A transcribed table's (setting, row) pairs."""
    found, setting = set(), ""
    for line in table.strip().splitlines():
        if line.startswith("## "):
            setting = line[3:]
        else:
            found.add((setting, line))
    return frozenset(found)


# Tables 3, 5, 7 and 9 (InstructGPT, text-davinci-003), as printed, cells joined by "|": Table
# 7's counts of items in parentheses, Table 9's gap to the full input after "_". Table 3 is
# five-shot on RULE per batch (split): subquestion accuracy, "None" demonstrations in the
# prompt (a count, kept in the row's source) and None accuracy; its "Avg." None Acc. pools the
# splits' subquestions (71 of 222), the suite's split row averages the five values instead.
RULE_TABLE_3 = """
#1 | 70.1 | 0 | 10.3
#2 | 69.7 | 0 | 25.9
#3 | 72.9 | 0 | 0.0
#4 | 71.3 | 1 | 43.8
#5 | 66.0 | 1 | 40.6
Avg. | 70.1 | 0.4 | 32.0
"""
RULE_TABLE_5 = """
Context | 72.2
+ Selective Rationale | 91.4
+ Eliminative Rationale | 66.0
+ Both | 89.6
"""
RULE_TABLE_7 = """
Yes | 89.7 (784) | 31.5 (2,218)
No | 88.7 (781) | 28.1 (2,213)
"""
RULE_TABLE_9 = """
0-shot | 41.0_-23.0 | 58.8_-4.2 | 86.4_-3.7 | 53.4_-4.3
5-shot | 42.5_-29.7 | 70.5_+0.0 | 86.9_-3.1 | 64.7_+1.7
"""
# Each printed row -> (the row's setting, the keys of its cells in order; None: a count, not a
# score, named in the row's source). Table 5's rows are one row of ours (one model and setting,
# four tasks), Table 7's too; Table 3's are a row per split and the average.
_TABLE_3_KEYS = ("rule/subq_acc", None, "rule/none_acc")
NOTE_COLUMNS = {"Table 3": "# None in shot"}
ANALYSIS_ROWS = {
    **{("Table 3", f"#{k}"): (f"five-shot on RULE, split {k} (Table 3)", _TABLE_3_KEYS) for k in range(1, 6)},
    ("Table 3", "Avg."): ("five-shot on RULE, 5 splits (Table 3)", _TABLE_3_KEYS),
    ("Table 5", "Context"): ("five-shot (Table 5)", ("rule_5shot_rationale_none/mainq_acc",)),
    ("Table 5", "+ Selective Rationale"): ("five-shot (Table 5)", ("rule_5shot_rationale_selective/mainq_acc",)),
    ("Table 5", "+ Eliminative Rationale"): ("five-shot (Table 5)", ("rule_5shot_rationale_eliminative/mainq_acc",)),
    ("Table 5", "+ Both"): ("five-shot (Table 5)", ("rule_5shot_rationale_both/mainq_acc",)),
    ("Table 7", "Yes"): (
        "five-shot, five prompts (Table 7)",
        ("rule_5shot_alignment/correct_option_acc", "rule_5shot_alignment/incorrect_option_acc"),
    ),
    ("Table 7", "No"): (
        "five-shot, five prompts (Table 7)",
        ("rule_5shot_alignment_noinstr/correct_option_acc", "rule_5shot_alignment_noinstr/incorrect_option_acc"),
    ),
    **{
        ("Table 9", printed): (
            f"{setting} (Table 9)",
            tuple(f"{task}/{metric}" for metric in ("mainq_acc", "subq_acc", "selective_acc", "eliminative_acc")),
        )
        for printed, setting, task in (
            ("0-shot", "zero-shot", "rule_noctx"),
            ("5-shot", "five-shot", "rule_5shot_noctx"),
        )
    },
}
ANALYSIS_TABLES = {
    "Table 3": (RULE_TABLE_3, "subquestion accuracy and None accuracy (gold 'None of the above choices') per split"),
    "Table 5": (RULE_TABLE_5, "MainQ accuracy with rationales in the input"),
    "Table 7": (RULE_TABLE_7, "rationale alignment with (Yes) and without (No) the task instruction; (n) items"),
    "Table 9": (RULE_TABLE_9, "context-ablated accuracy; _gap to the full input"),
}


def _analysis_rows() -> list[PublishedRow]:
    """One InstructGPT row per setting of Tables 3, 5, 7 and 9; a cell is the printed number
    before its count or gap."""
    rows: dict[str, PublishedRow] = {}
    for name, (table, what) in ANALYSIS_TABLES.items():
        for printed, *values in table_lines(table):
            setting, keys = ANALYSIS_ROWS[name, printed]
            source = f"RULE (Kawabata & Sugawara, EMNLP 2023) {name}: {what}; InstructGPT (text-davinci-003)"
            notes = [f"{NOTE_COLUMNS[name]}: {text}" for key, text in zip(keys, values, strict=True) if key is None]
            source += "".join(f"; {note}" for note in notes)
            row = rows.setdefault(setting, PublishedRow("rule", "InstructGPT", source, {}, setting=setting))
            for key, text in zip(keys, values, strict=True):
                if key is not None:
                    row.cells[key] = PublishedCell(number(re.split(r"[ _]", text)[0], percent=True))
    return list(rows.values())


def published_rows() -> list[PublishedRow]:
    """Table 2, Table 6 (less the rows Table 2 already has), Table 8 (its own settings) and the
    InstructGPT rows of Tables 3, 5, 7 and 9: every table of the paper that prints scores."""
    table_2 = _table_rows(RULE_TABLE_2, "Table 2")
    table_8 = _table_rows(RULE_TABLE_8, "Table 8", metrics=TABLE_8_METRICS, suffix=" (Table 8)")
    return [*table_2, *_table_rows(RULE_TABLE_6, "Table 6", skip=_lines(RULE_TABLE_2)), *table_8, *_analysis_rows()]


# Few-shot split tasks -> the paper's setting: ``rule_<shots>shot[_<demos>]_split<k>``
# (``data.fewshot_task``).
_DEMOS = "|".join(sorted(DEMOS, key=len, reverse=True))
_SPLIT_TASK = re.compile(rf"rule_(?P<shots>[15])shot(?:_(?P<demos>{_DEMOS}))?_split\d+")
# Tasks that ask every question under each of the five published prompts (one run, five prompts).
_FIVE_PROMPTS = re.compile(r"rule_5shot_(?:rationale_\w+|alignment(?:_noinstr)?|noctx)")
FIVE_PROMPTS = "five-shot on ReClor, five prompts"
ZERO_SHOT_COT = "zero-shot, CoT"  # Table 2's zero-shot "InstructGPT+ CoT" row (Kojima et al.'s two requests)


def rule_settings(runs: list[TaskRun], notes: list[str]) -> list[TaskRun]:
    """RULE rows per setting, as in the paper's Tables 2 and 6: zero-shot tasks as they are, the
    five-prompt tasks (Tables 5, 7, 9) in a five-shot row, and the split runs of each few-shot
    setting as one ``rule`` row whose values are the mean and ± the population std over the
    splits (as ``explain-eval rule-protocol``).
    """
    plain, splits = [], {}
    for run in runs:
        match = _SPLIT_TASK.fullmatch(run.task)
        if match:
            key = (run.model, run.setting, int(match["shots"]), match["demos"] or "reclor")
            splits.setdefault(key, []).append(run)
        elif _FIVE_PROMPTS.fullmatch(run.task):
            plain.append(replace(run, setting=", ".join([FIVE_PROMPTS, *_extra(run.setting)])))
        elif run.task == zeroshot_cot.ANSWER_TASK:  # Table 2's zero-shot "InstructGPT+ CoT" row
            setting = ", ".join([ZERO_SHOT_COT, *_extra(run.setting)])
            plain.append(replace(run, task="rule", setting=setting, source_task=run.task))
        else:
            plain.append(replace(run, setting=run.setting or "zero-shot"))
    for (model, setting, shots, demos), group in splits.items():
        group.sort(key=lambda run: run.task)
        metrics = sorted({key for run in group for key in run.scores})
        scores = {}
        for key in metrics:
            values = [run.scores[key].value for run in group if key in run.scores]
            finite = [v for v in values if v is not None and math.isfinite(v)]
            scores[key] = Score(
                statistics.fmean(finite) if finite else None, statistics.pstdev(finite) if len(finite) > 1 else None
            )
        sizes = [run.n_samples for run in group]
        parts = ", ".join(f"{run.task} ({run.n_samples if run.n_samples is not None else '?'} docs)" for run in group)
        limits = {run.limit for run in group} - {None}
        label = ", ".join([f"{demo_setting(shots, demos)} ({len(group)} of 5 splits)", *_extra(setting)])
        flag = ("" if shots == 5 else f" --shots {shots}") + ("" if demos == "reclor" else f" --demos {demos}")
        originals = [run.n_original for run in group]
        plain.append(
            TaskRun(
                model,
                "rule",
                scores,
                sum(sizes) if None not in sizes else None,
                max(limits) if limits else None,
                group[0].path,
                max(run.timestamp for run in group),
                group[0].harness_version,
                setting=label,
                n_original=sum(originals) if None not in originals else None,
                model_id=group[0].model_id,
                derived=f"mean ± population std over {len(group)} split runs: {parts}",
            )
        )
        notes.append(
            f"{model}, {label}: mean ± population std over "
            f"{', '.join(f'{run.task} ({run.path})' for run in group)}; the "
            "paper's Consistency and MainQ-wise columns pool the five runs instead "
            f"(`explain-eval rule-protocol{flag} --summarize-only` computes those)"
            + (f"; {MAIN_QUESTIONS_NOTE}." if demos != "rule" else ".")
        )
    return plain


def _extra(setting: str) -> list[str]:
    """A run's setting beyond its shots (the harness' own, always zero here): chat template, system instruction."""
    return [part for part in setting.split(", ") if part and not part.endswith("-shot")]


_RATIONALE_LABELS = {
    "none": "MainQ, no rationale",
    "selective": "MainQ + selective rationale",
    "eliminative": "MainQ + eliminative rationales",
    "both": "MainQ + all rationales",
}
# The zero-shot tasks of Tables 5, 7 and 9 say so: the paper's numbers are five-shot (the
# rule_5shot_* tasks), except Table 9's 0-shot row.
TASK_LABELS = {
    "rule": "main questions + subquestions",
    "rule_main": "main questions",
    "rule_sub": "subquestions",
    "rule_noctx": "no context, zero-shot (App. M, Table 9)",
    "rule_5shot_noctx": "no context, five-shot (App. M, Table 9)",
    "rule_alignment": "rationale alignment, zero-shot (App. J; Table 7 is five-shot)",
    "rule_alignment_noinstr": "rationale alignment, no instruction, zero-shot (App. J; Table 7 is five-shot)",
    "rule_5shot_alignment": "rationale alignment, five-shot (App. J, Table 7)",
    "rule_5shot_alignment_noinstr": "rationale alignment, no instruction, five-shot (App. J, Table 7)",
    "rule_cot_faithfulness": "chain-of-thought faithfulness: early answering and filler (Lanham et al. 2023)",
    cot_edits.EDITS_TASK: "chain-of-thought faithfulness, step 1: the editor's mistakes and paraphrases",
    cot_edits.EDITED_TASK: "chain-of-thought faithfulness: adding mistakes and paraphrasing (Lanham et al. 2023)",
    zeroshot_cot.REASONING_TASK: "zero-shot chain of thought, request 1: the reasoning (Kojima et al.)",
    zeroshot_cot.ANSWER_TASK: "zero-shot chain of thought, request 2: the answer (Table 2, Kojima et al.)",
    **{f"rule_rationale_{s}": f"{label}, zero-shot (Table 5 is five-shot)" for s, label in _RATIONALE_LABELS.items()},
    **{f"rule_5shot_rationale_{s}": f"{label}, five-shot (Table 5)" for s, label in _RATIONALE_LABELS.items()},
    **{
        fewshot_task(shots, k, demos): f"{demo_setting(shots, demos)}, run {k}"
        for shots in rule_data.SHOTS
        for demos in DEMOS
        for k in rule_data.SPLITS
    },
}
METRIC_LABELS = {
    "mainq_acc": "MainQ accuracy",
    "subq_acc": "SubQ accuracy",
    "selective_acc": "selective SubQ accuracy",
    "eliminative_acc": "eliminative SubQ accuracy",
    "consistency": "consistency",
    "mainq_wise_subq_acc": "MainQ-wise SubQ accuracy",
    "none_acc": "None accuracy",
    "correct_option_acc": "correct-option alignment",
    "incorrect_option_acc": "incorrect-option alignment",
    "unparsed": "unread answers",
    **{f"same_at_{p}": f"same answer, {p}% of the CoT" for p in (0, 25, 50, 75, 100)},
    "early_aoc": "early answering AOC",
    "filler_same": "same answer, filler CoT",
    "filler_acc": "accuracy, filler CoT",
    "no_cot_acc": "accuracy, no CoT",
    "original_unread": "original answer unread",
    "mistake_same": "same answer, a mistake added",
    "mistake_acc": "accuracy, a mistake added",
    "paraphrase_same": "same answer, CoT paraphrased",
    "paraphrase_acc": "accuracy, CoT paraphrased",
    "edit_unusable": "unusable edits",
    "words": "reasoning words",
    "empty": "empty reasonings",
    **{
        f"{metric}{MAINQ_CORRECT}": f"{label}, correct MainQ only (Table 8)"
        for metric, label in (
            ("subq_acc", "SubQ accuracy"),
            ("selective_acc", "selective SubQ accuracy"),
            ("eliminative_acc", "eliminative SubQ accuracy"),
            ("consistency", "consistency"),
            ("mainq_wise_subq_acc", "MainQ-wise SubQ accuracy"),
        )
    },
}
# From lm_eval_tasks/rule/README.md (Section 4 of the paper).
DEFINITIONS = {
    "mainq_acc": "Accuracy on the ReClor main questions (option digit scored by log-likelihood; with chain of "
    "thought, read from the generated 'the answer is Option<k>').",
    "subq_acc": "Accuracy on the subquestions (micro average): each asks which rationale explains why "
    "one option of its main question is right or wrong.",
    "selective_acc": "Accuracy on subquestions about the correct option of their main question.",
    "eliminative_acc": "Accuracy on subquestions about an incorrect option of their main question.",
    "consistency": "Share of main questions answered correctly together with all of their subquestions "
    "(groups cut by --limit are left out).",
    "mainq_wise_subq_acc": "Mean over main questions of the share of their subquestions answered correctly "
    "(macro average).",
    "none_acc": "Accuracy on subquestions whose gold answer is 'None of the above choices' (Table 3).",
    "correct_option_acc": "Rationale alignment: accuracy on items built for the correct option.",
    "incorrect_option_acc": "Rationale alignment: accuracy on items built for an incorrect option.",
    "unparsed": "Chain of thought: share of generations naming no single 'the answer is Option<k>' (empty, none, "
    "two different ones, a letter); zero-shot chain of thought: extracted answers naming no option label. Each "
    "counts as wrong.",
    **{
        f"same_at_{p}": f"Faithfulness, early answering: share of a CoT run's answers unchanged when the model answers "
        f"again after only the first {p}% of the CoT's sentences (Lanham et al. 2023)."
        for p in (0, 25, 50, 75, 100)
    },
    "early_aoc": "Faithfulness: area over the curve of the unchanged-answer share against the fraction of the CoT "
    "kept (0: the answer never depends on the CoT; larger: it does).",
    "filler_same": "Faithfulness: share of answers unchanged when the CoT is replaced by as many ' ...' as it has "
    "words.",
    "filler_acc": "Accuracy when the CoT is replaced by filler.",
    "no_cot_acc": "Accuracy when the model answers with none of its CoT.",
    "original_unread": "Share of the CoT run's generations whose answer could not be read (left out of the rest).",
    "mistake_same": "Faithfulness, adding mistakes: share of a CoT run's answers unchanged when one sentence of the "
    "CoT is replaced by the editor model's mistaken version (Lanham et al. 2023; low: the answer follows the "
    "reasoning).",
    "mistake_acc": "Accuracy after a CoT with one sentence made wrong.",
    "paraphrase_same": "Faithfulness, paraphrasing: share of answers unchanged when the whole CoT is reworded by the "
    "editor model (Lanham et al. 2023; high: the content, not the wording, carries the answer).",
    "paraphrase_acc": "Accuracy after the paraphrased CoT.",
    "edit_unusable": "Share of the editor's edits that are empty or the original again: scored on the original "
    "CoT, flagged, and left out of the shares.",
    "words": "Zero-shot chain of thought, request 1: mean words of the reasoning.",
    "empty": "Zero-shot chain of thought, request 1: share of empty reasonings.",
    **{
        f"{metric}{MAINQ_CORRECT}": f"Table 8 (Appendix H): {what} over the main questions the model answered "
        "correctly only (groups cut by --limit are left out of the consistency and MainQ-wise values)."
        for metric, what in (
            ("subq_acc", "SubQ accuracy"),
            ("selective_acc", "selective SubQ accuracy"),
            ("eliminative_acc", "eliminative SubQ accuracy"),
            ("consistency", "the share with all subquestions right"),
            ("mainq_wise_subq_acc", "MainQ-wise SubQ accuracy"),
        )
    },
}


def _outcome(sample: dict[str, Any]) -> list[Any] | None:
    """The logged ``Outcome`` of a sample (any metric carries the same one), if readable."""
    value = sample.get("mainq_acc", sample.get("subq_acc"))
    return value if isinstance(value, list) and len(value) == 7 else None


def sample_fields(task: str, sample: dict[str, Any]) -> dict[str, Any]:
    """RULE questions in the sample viewer: the question asked, its main question, its kind, right or not."""
    doc = sample.get("doc") or {}
    outcome = _outcome(sample)
    fields: dict[str, Any] = {
        "id": doc.get("doc_id"),
        "question": asked_question(doc.get("prompt")),
        "main question": doc.get("main_id"),
        "gold": doc.get("label"),
    }
    if outcome is not None:
        fields["kind"] = outcome[2]
        fields["correct"] = "yes" if outcome[4] else "no"
        fields[SUBQUESTIONS] = outcome[6]
    elif isinstance(sample.get("acc"), (int, float)):
        fields["correct"] = "yes" if sample["acc"] else "no"
    if "condition" in doc:  # faithfulness: the answer again, after the cut CoT, beside the original
        fields |= faithfulness_fields(sample)
    if "request" in doc:  # the editor's output: the sentence (or reasoning) and its edit
        fields |= edit_fields(sample)
    if isinstance(sample.get("unparsed"), str):  # chain of thought: the answer read from the generation
        resps = sample.get("filtered_resps") or [""]
        reading = read_answer(resps[0] if isinstance(resps[0], str) else "")
        fields["answer"] = f"Option{reading.option}" if reading.option is not None else f"none: {reading.problem}"
        fields["answer read"] = "yes" if reading.option is not None else "no"
    return fields


def faithfulness_fields(sample: dict[str, Any]) -> dict[str, Any]:
    """A faithfulness doc: the CoT it was given, the answer now and the original one."""
    doc = sample["doc"]
    logliks = [pair[0] for pair in sample.get("filtered_resps") or [] if isinstance(pair, list) and pair]
    numbers = [value for value in logliks if isinstance(value, (int, float))]
    now = numbers.index(max(numbers)) if len(numbers) == len(logliks) and numbers else None
    original = doc.get("original")
    read = isinstance(original, int) and original >= 0
    return {
        "id": doc.get("generation"),
        "condition": doc.get("condition"),
        "CoT kept": _cot_kept(doc),
        "CoT given": doc.get("cot"),
        "answer now": f"Option{now}" if now is not None else "none",
        "original answer": f"Option{original}" if read else "unread",
        "same": "-" if now is None or not read else "yes" if now == original else "no",
    }


def _cot_kept(doc: dict[str, Any]) -> str:
    condition = doc.get("condition")
    if condition == "early":
        return f"{doc.get('fraction', 0):.0%}"
    if condition == MISTAKE:
        return f"all, sentence {doc.get('sentence', 0) + 1} made wrong" + _unusable(doc)
    if condition == PARAPHRASE:
        return "all, paraphrased" + _unusable(doc)
    return "filler"


def _unusable(doc: dict[str, Any]) -> str:
    problem = doc.get("edit_problem")
    return f" (unusable: {problem}; the original given)" if problem else ""


def edit_fields(sample: dict[str, Any]) -> dict[str, Any]:
    """An editor's request: what it was asked to edit, and the edit as the next task reads it."""
    doc = sample["doc"]
    resps = sample.get("filtered_resps") or [""]
    edit, problem = read_edit(resps[0] if isinstance(resps[0], str) else "", str(doc.get("original", "")))
    return {
        "id": doc.get("generation"),
        "edit": doc.get("kind"),
        "original": doc.get("original"),
        "edited": edit,
        "usable": "no: " + problem if problem else "yes",
    }


SUBQUESTIONS = "subquestions of its main question"
CONSISTENCY_FIELD = "consistency"  # of the row's main question with its subquestions
GROUP_FIELD = "its group"


def group_questions(task: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each main question followed by its subquestions, every row with its group's consistency
    outcome as the ``consistency`` metric counts it (``metrics.Group``); rows of no question
    (unreadable lines) stay at the end."""
    members: dict[str, list[dict[str, Any]]] = {}
    loose = []
    for row in rows:
        if row.get("kind") in (MAIN, *SUB_KINDS) and row.get("main question") is not None:
            members.setdefault(str(row["main question"]), []).append(row)
        else:
            loose.append(row)
    arranged = []
    for main_id, group_rows in members.items():
        outcomes = [
            Outcome(str(row["id"]), main_id, row["kind"], 0, row.get("correct") == "yes", False, int(row[SUBQUESTIONS]))
            for row in group_rows
        ]
        group = groups(outcomes)[main_id]
        ordered = sorted(group_rows, key=lambda row: (row["kind"] != MAIN, str(row["id"])))
        verdict, detail = _consistency(group)
        for row in ordered:
            row[CONSISTENCY_FIELD], row[GROUP_FIELD] = verdict, detail
        arranged += ordered
    return arranged + loose


def _consistency(group: Group) -> tuple[str, str]:
    """The group's consistency outcome (a facet) and what it rests on."""
    right = sum(s.correct for s in group.subs)
    subs = f"subquestions right: {right} of the {len(group.subs)} in this run ({group.size} in the task)"
    if group.main is None:
        return "main question not in this run", subs
    main = f"main question {'right' if group.main.correct else 'wrong'}; {subs}"
    if group.size == 0:
        return "no subquestions", main
    if not group.complete:
        return "incomplete (left out of consistency)", main
    return ("consistent" if group.consistent else "not consistent"), main


def sample_outcomes(task: str, sample: dict[str, Any]) -> dict[str, float | None]:
    outcome = _outcome(sample)
    if outcome is None:
        return {}
    main = outcome[2] == "main"
    return {"mainq_acc": float(outcome[4]) if main else None, "subq_acc": None if main else float(outcome[4])}


def paper_setting(setting: str) -> str:
    """The Table 2 setting a run's setting compares with."""
    for prefix, published in (
        ("five-shot on ReClor, CoT", "five-shot on ReClor, CoT"),
        ("five-shot on ReClor", "five-shot on ReClor"),
        ("five-shot on RULE", "five-shot on RULE, for reference"),
        ("one-shot on ReClor, CoT", "one-shot on ReClor, CoT"),
        ("one-shot on ReClor", "one-shot on ReClor"),
        ("one-shot on RULE", "one-shot on RULE, for reference"),
        (ZERO_SHOT_COT, ZERO_SHOT_COT),
    ):
        if setting.startswith(prefix):
            return published
    return ZERO_SHOT


# Documents behind Table 2's numbers where every row of a setting ran on all of them
# (zero-shot, fine-tuned, human): 943 main questions, 3,003 subquestions; none for the
# few-shot rows (a mean over five splits).
_PUBLISHED_N = {"rule/mainq_acc": 943, "rule/subq_acc": 3003, "rule/consistency": 943}


def published_n(setting: str, key: str) -> int | None:
    return None if setting.startswith(("five-shot", "one-shot")) else _PUBLISHED_N.get(key)


# The run columns that are shares of their task's documents: the combined `rule` task mixes
# main questions and subquestions, and the selective/eliminative accuracies are over a part
# of the subquestions, so only the logged samples count theirs.
_SHARES_OF_DOCS = ("rule_main/mainq_acc", "rule_sub/subq_acc")


def share_of(key: str, values: Mapping[str, float | None]) -> float | None:
    return values.get("#samples") if key in _SHARES_OF_DOCS else None


ACCURACY, CONSISTENCY = "accuracy", "consistency"
HEADLINES = (
    Headline(("rule/consistency",), "consistency", CONSISTENCY),
    Headline(("rule/mainq_acc", "rule_main/mainq_acc"), "MainQ", ACCURACY),
    Headline(("rule/subq_acc", "rule_sub/subq_acc"), "SubQ", ACCURACY),
    Headline(("rule/selective_acc", "rule_sub/selective_acc"), "selective SubQ", ACCURACY),
    Headline(("rule/eliminative_acc", "rule_sub/eliminative_acc"), "eliminative SubQ", ACCURACY),
    Headline(("rule/mainq_wise_subq_acc",), "MainQ-wise SubQ", ACCURACY),
)
FAMILIES = {
    CONSISTENCY: Family(
        "Consistency: main questions answered right with all their subquestions", "share of main questions"
    ),
    ACCURACY: Family("Main-question and subquestion accuracy", "accuracy (share of questions)"),
}

SPEC = PaperSpec(
    key="rule",
    title="RULE: rationale understanding (ReClor main questions and subquestions)",
    datasets={"rule": (rule_data.MAIN_SOURCE, *rule_data.SUB_SOURCES.values(), rule_data.PROMPTS_SOURCE)},
    board=Board(
        task_order=("rule", "rule_main", "rule_sub"),
        pm_note="± on published rows: the std over the five test splits printed in RULE Table 2 (0.00 where the paper "
        "ran once).",
        published=published_rows,
        adjust_runs=rule_settings,
        task_labels=TASK_LABELS,
        metric_labels=METRIC_LABELS,
        definitions=DEFINITIONS,
        samples=SampleView(
            sample_fields,
            facets=("kind", "correct", CONSISTENCY_FIELD, "answer read", "prediction"),
            outcomes=sample_outcomes,
            doc_key=doc_field_key("doc_id"),
            arrange=group_questions,
        ),
        headlines=HEADLINES,
        families=FAMILIES,
        reference_model="InstructGPT",
        paper_setting=paper_setting,
        published_n=published_n,
        share_of=share_of,
    ),
    runs=RunSteps(
        samples_input=SamplesInput(
            lambda task: zeroshot_cot.REASONING_TASK if task == zeroshot_cot.ANSWER_TASK else None, "explanations"
        ),
    ),
)

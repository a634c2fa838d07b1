"""Calibrate the question-match threshold of `factseek eval decompose`.

    python experiments/eval_decompose.py

MiniLM cosine of question pairs written for this script (no data-set text): paraphrases vs
same-topic different questions vs unrelated; prints the threshold with the best balanced
accuracy (paraphrase vs the rest). The evaluation itself is the CLI, see docs/llm.md.
"""

from __future__ import annotations

import numpy as np

# (a, b): same question in other words.
PARAPHRASES = [
    ("Did the city raise bus fares in 2022?", "Were bus fares in the city increased in 2022?"),
    (
        "Is the unemployment rate lower than it was in 2019?",
        "Has unemployment fallen below its 2019 level?",
    ),
    (
        "Did the senator vote against the farm bill?",
        "Did the senator cast a vote opposing the farm bill?",
    ),
    (
        "Are there more than 5,000 homeless people in the county?",
        "Does the county have over 5,000 homeless residents?",
    ),
    (
        "Did the governor sign the tax cut into law?",
        "Was the tax cut signed into law by the governor?",
    ),
    (
        "Has crime gone up since the new police chief started?",
        "Did crime increase after the new police chief took over?",
    ),
    (
        "Is the school district spending less per student than before?",
        "Has per-student spending in the district decreased?",
    ),
    (
        "Did the company move its headquarters overseas?",
        "Was the company's headquarters relocated abroad?",
    ),
    (
        "Do most doctors support the new vaccine rules?",
        "Are the new vaccine rules backed by a majority of doctors?",
    ),
    ("Was the bridge built over budget?", "Did the bridge cost more than its budget?"),
    (
        "Did the mayor promise to cut property taxes?",
        "Did the mayor pledge to lower property taxes?",
    ),
    (
        "Is the state's minimum wage higher than the federal one?",
        "Does the state have a minimum wage above the federal minimum?",
    ),
    (
        "Did imports from China double over the decade?",
        "Were imports from China twice as high at the end of the decade?",
    ),
    (
        "Has the river been declared safe for swimming?",
        "Did officials say the river is safe to swim in?",
    ),
    (
        "Did the bill pass the House with bipartisan support?",
        "Was the bill approved in the House by members of both parties?",
    ),
    (
        "Are wildfires in the region more frequent than 30 years ago?",
        "Do wildfires happen more often in the region now than three decades ago?",
    ),
    (
        "Did the opponent accept money from oil companies?",
        "Has the opponent taken donations from the oil industry?",
    ),
    (
        "Is the hospital the largest employer in the town?",
        "Does the hospital employ more people than any other business in town?",
    ),
    ("Did the program create 10,000 jobs?", "Were 10,000 jobs created by the program?"),
    (
        "Was the election result certified by the state?",
        "Did the state certify the election results?",
    ),
]
# (a, b): same topic, a different question (the hard negatives).
SAME_TOPIC = [
    ("Did the city raise bus fares in 2022?", "Did bus ridership in the city fall in 2022?"),
    (
        "Is the unemployment rate lower than it was in 2019?",
        "Did the state add manufacturing jobs in 2019?",
    ),
    ("Did the senator vote against the farm bill?", "Did the farm bill increase crop subsidies?"),
    (
        "Are there more than 5,000 homeless people in the county?",
        "Did the county open new homeless shelters?",
    ),
    ("Did the governor sign the tax cut into law?", "Did the tax cut mostly benefit high earners?"),
    (
        "Has crime gone up since the new police chief started?",
        "Did the new police chief hire more officers?",
    ),
    (
        "Is the school district spending less per student than before?",
        "Have teacher salaries in the district gone up?",
    ),
    (
        "Did the company move its headquarters overseas?",
        "Did the company lay off workers last year?",
    ),
    (
        "Do most doctors support the new vaccine rules?",
        "Do the new vaccine rules apply to children?",
    ),
    ("Was the bridge built over budget?", "Was the bridge finished on schedule?"),
    ("Did the mayor promise to cut property taxes?", "Did property values in the city rise?"),
    (
        "Is the state's minimum wage higher than the federal one?",
        "Did the state raise its minimum wage last year?",
    ),
    (
        "Did imports from China double over the decade?",
        "Did exports to China fall over the decade?",
    ),
    ("Has the river been declared safe for swimming?", "Did a factory dump waste into the river?"),
    (
        "Did the bill pass the House with bipartisan support?",
        "Will the bill reach the Senate floor this year?",
    ),
    (
        "Are wildfires in the region more frequent than 30 years ago?",
        "Is the region spending more on firefighting?",
    ),
    (
        "Did the opponent accept money from oil companies?",
        "Did the opponent vote for offshore drilling?",
    ),
    ("Is the hospital the largest employer in the town?", "Is the hospital at risk of closing?"),
    ("Did the program create 10,000 jobs?", "Did the program cost more than planned?"),
    (
        "Was the election result certified by the state?",
        "Did turnout in the election reach a record high?",
    ),
]


def _encoder():
    from factseek.ml.encode import default_encoder

    return default_encoder()


def pair_cosines(pairs, enc) -> np.ndarray:
    a = enc.encode([p[0] for p in pairs])
    b = enc.encode([p[1] for p in pairs])
    return np.sum(a * b, axis=1)


def calibrate() -> float:
    enc = _encoder()
    para = pair_cosines(PARAPHRASES, enc)
    same = pair_cosines(SAME_TOPIC, enc)
    # unrelated: pair each question with a paraphrase pair's question from another topic
    unrelated_pairs = [
        (PARAPHRASES[i][0], PARAPHRASES[(i + 7) % len(PARAPHRASES)][1])
        for i in range(len(PARAPHRASES))
    ]
    unrel = pair_cosines(unrelated_pairs, enc)
    for name, x in (("paraphrase", para), ("same topic", same), ("unrelated", unrel)):
        print(
            f"{name:11s} n={len(x):3d} min={x.min():.3f} p10={np.quantile(x, 0.1):.3f} median={np.median(x):.3f} p90={np.quantile(x, 0.9):.3f} max={x.max():.3f}"
        )
    neg = np.concatenate([same, unrel])
    best = (0.0, 0.0)
    for t in np.arange(0.30, 0.95, 0.01):
        bal = 0.5 * (np.mean(para >= t) + np.mean(neg < t))
        if bal > best[0] + 1e-9:
            best = (bal, float(t))
    t = round(best[1], 2)
    print(
        f"best balanced accuracy {best[0]:.3f} at threshold {t:.2f}: "
        f"paraphrases matched {np.mean(para >= t):.0%}, same-topic rejected {np.mean(same < t):.0%}, "
        f"unrelated rejected {np.mean(unrel < t):.0%}"
    )
    return t


if __name__ == "__main__":
    calibrate()

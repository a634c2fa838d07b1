"""Stance probabilities that mean what they say: a fitted calibration map and its measurement.

``Calibration(temperature, bias)`` maps a reading's probabilities ``p`` (supports, refutes,
nei) to ``softmax(log p / temperature + bias)``: one temperature for the whole vector (how
sure the model is) and a bias per label (how often the data it is used on holds each label),
the bias of ``nei`` fixed at 0 (a common shift changes nothing). The identity is
``Calibration()``. The map keeps the order of a reading's probabilities when the bias is 0 and
moves the decision between labels otherwise; thresholds are therefore tuned after it.

``fit_calibration(probs, gold, groups)`` chooses the temperature and the two free biases
minimising the negative log-likelihood of the gold labels (L-BFGS from the identity); with
``groups`` (each pair's source) each source weighs the same, however many pairs it has. The calibration error that measures it (``expected_calibration_error``, ``reliability``) is in
``factseek.metrics.calibration``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from factseek.errors import InputError, ModelError
from factseek.types import STANCE_LABELS

EPS = 1e-9


@dataclass(frozen=True, kw_only=True)
class Calibration:
    """``softmax(log p / temperature + bias)`` (see the module docstring)."""

    temperature: float = 1.0
    bias: tuple[float, float, float] = (0.0, 0.0, 0.0)
    fitted_on: str = ""  # what it was fitted on ("validation side, 3,354 pairs")

    def __post_init__(self) -> None:
        if not (np.isfinite(self.temperature) and self.temperature > 0):
            raise ModelError(f"calibration temperature must be above 0, got {self.temperature}")
        if len(self.bias) != len(STANCE_LABELS) or not np.all(np.isfinite(self.bias)):
            raise ModelError(f"calibration bias must be {len(STANCE_LABELS)} finite numbers")

    @property
    def identity(self) -> bool:
        return self.temperature == 1.0 and not any(self.bias)

    def apply(self, probs: np.ndarray) -> np.ndarray:
        """Calibrated (n, 3) probabilities from raw ones."""
        probs = np.asarray(probs, dtype=np.float64)
        if self.identity or probs.size == 0:
            return probs
        z = np.log(np.clip(probs, EPS, 1.0)) / self.temperature + np.asarray(self.bias)
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": "temperature and label bias on log-probabilities (NLL)",
            "temperature": round(self.temperature, 6),
            "bias": {lab: round(b, 6) for lab, b in zip(STANCE_LABELS, self.bias, strict=True)},
            "fitted_on": self.fitted_on,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Calibration:
        """The map stored in a model's config.json (None or {}: the identity)."""
        if not data:
            return cls()
        try:
            bias = data.get("bias") or {}
            return cls(
                temperature=float(data.get("temperature", 1.0)),
                bias=tuple(float(bias.get(lab, 0.0)) for lab in STANCE_LABELS),  # type: ignore[arg-type]
                fitted_on=str(data.get("fitted_on", "")),
            )
        except (TypeError, ValueError, AttributeError) as e:
            raise ModelError(f"bad calibration section ({e})") from None


def fit_calibration(
    probs: np.ndarray,
    gold: Sequence[str],
    *,
    groups: Sequence[str] | None = None,
    fitted_on: str = "",
) -> Calibration:
    """The NLL-optimal temperature and label biases on ``(probs, gold)`` (module docstring);
    with ``groups`` (each example's source) every group weighs the same in the likelihood."""
    from scipy.optimize import minimize

    probs = np.asarray(probs, dtype=np.float64)
    if len(gold) == 0 or probs.shape != (len(gold), len(STANCE_LABELS)):
        raise InputError("calibration needs one (supports, refutes, nei) reading per gold label")
    try:
        y = np.array([STANCE_LABELS.index(g) for g in gold])  # type: ignore[arg-type]
    except ValueError:
        raise InputError(f"unknown stance labels in {sorted(set(gold))}") from None
    logp = np.log(np.clip(probs, EPS, 1.0))
    weight = np.ones(len(y))
    if groups is not None:
        sizes: dict[str, int] = {}
        for name in groups:
            sizes[name] = sizes.get(name, 0) + 1
        weight = np.array([len(y) / (len(sizes) * sizes[name]) for name in groups])

    def nll(theta: np.ndarray) -> tuple[float, np.ndarray]:
        t = np.exp(theta[0])
        b = np.array([theta[1], theta[2], 0.0])
        z = logp / t + b
        z -= z.max(axis=1, keepdims=True)
        logq = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        q = np.exp(logq)
        loss = -(weight * logq[np.arange(len(y)), y]).mean()
        onehot = np.eye(len(STANCE_LABELS))[y]
        dz = weight[:, None] * (q - onehot) / len(y)  # d loss / d z
        grad_t = -(dz * logp).sum() / t  # dz/dt = -logp / t^2, dt/dtheta0 = t
        grad = np.array([grad_t, dz[:, 0].sum(), dz[:, 1].sum()])
        return float(loss), grad

    result = minimize(nll, np.zeros(3), jac=True, method="L-BFGS-B")
    theta = result.x
    return Calibration(
        temperature=float(np.exp(theta[0])),
        bias=(float(theta[1]), float(theta[2]), 0.0),
        fitted_on=fitted_on,
    )


__all__ = [
    "Calibration",
    "fit_calibration",
]

"""Harbor's per-trial ``result.json``, read leniently, and what it says about the trial.

The models keep only the fields TermGrade maps and ignore the rest, so one reader serves
Harbor 0.1.x through 0.26 (see :mod:`termgrade.ingest.harbor_layout`).

Whether a trial *counts* follows Harbor's own error policy: an exception either leaves the
verifier's reward valid (the agent timed out, exited non-zero, overflowed its context:
a task failure that counts) or invalidates it (the sandbox did not start, the model API
failed, the verifier timed out: infrastructure, never a task failure). Harbor >= 0.26
writes that verdict into result.json (``reward_valid``, ``exception_info.policy``) and
it wins; for older results the table below, taken from Harbor's documented exception
names, decides, and an unknown exception keeps the reward valid when one was written,
as Harbor does.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

AGENT_FAILURES = frozenset({
    "AgentTimeoutError", "NonZeroAgentExitCodeError", "ContextWindowExceededError",
    "ContextLengthExceededError", "OutputTokenExceededError", "OutputLengthExceededError",
    "AgentSafetyRefusalError", "ContentPolicyViolationError",
})
"""Exceptions after which Harbor still grades and the reward stands."""

INFRASTRUCTURE_FAILURES = frozenset({
    # the environment or sandbox
    "EnvironmentStartTimeoutError", "SandboxBuildFailedError", "AgentSetupTimeoutError",
    "HealthcheckError", "SandboxLikelyOutOfMemoryError", "MemoryLimitExceededError",
    "SSHAccessError", "RuntimeRequestError", "AddTestsDirError", "DownloadVerifierDirError",
    "CancelledError",
    # the model API, as Harbor and LiteLLM name its failures
    "ApiError", "ApiRateLimitError", "ApiInternalServerError", "ApiOverloadedError",
    "ApiConnectionClosedError", "ApiResponseStalledError", "UnknownApiError",
    "NetworkConnectionError", "ApiConnectionError", "ApiUsageLimitError", "RateLimitError",
    "InternalServerError", "ServiceUnavailableError", "APIConnectionError", "APIError",
    "Timeout", "BadRequestError", "UnprocessableEntityError", "UnsupportedParamsError",
    "UnsupportedModelParametersError", "APIResponseValidationError", "BudgetExceededError",
    "AgentAuthenticationError", "ModelNotFoundError", "ApiProviderResourceNotFoundError",
    "AuthenticationError", "PermissionDeniedError", "NotFoundError",
    # the verifier
    "VerifierTimeoutError", "RewardFileNotFoundError", "RewardFileEmptyError",
    "VerifierOutputParseError",
})
"""Exceptions that invalidate the reward: the trial is kept but not counted."""


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


def _utc(value: datetime | None) -> datetime | None:
    # Harbor 0.1 wrote some times without a zone; they are UTC on the hosts it ran on.
    if value is not None and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value


class HarborPolicy(_Lenient):
    should_retry: bool | None = None
    should_grade: bool | None = None
    has_valid_reward: bool | None = None


class HarborException(_Lenient):
    exception_type: str
    exception_message: str = ""
    policy: HarborPolicy | None = None

    def reward_stands(self) -> bool | None:
        """True/False when the policy or the table knows; None for an unknown exception."""
        if self.policy is not None and self.policy.has_valid_reward is not None:
            return self.policy.has_valid_reward
        if self.exception_type in AGENT_FAILURES:
            return True
        if self.exception_type in INFRASTRUCTURE_FAILURES:
            return False
        return None


class HarborAgentContext(_Lenient):
    n_input_tokens: int | None = None
    n_cache_tokens: int | None = None
    n_output_tokens: int | None = None
    metadata: dict[str, Any] | None = None


class HarborVerifierResult(_Lenient):
    rewards: dict[str, float | None] | None = None


class HarborModelInfo(_Lenient):
    name: str
    provider: str | None = None


class HarborAgentInfo(_Lenient):
    name: str
    version: str | None = None
    model_info: HarborModelInfo | None = None


class HarborStepResult(_Lenient):
    step_name: str
    agent_result: HarborAgentContext | None = None
    verifier_result: HarborVerifierResult | None = None
    exception_info: HarborException | None = None


class HarborTrialResult(_Lenient):
    id: str | None = None
    trial_name: str
    task_name: str
    agent_info: HarborAgentInfo
    agent_result: HarborAgentContext | None = None
    verifier_result: HarborVerifierResult | None = None
    exception_info: HarborException | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    step_results: list[HarborStepResult] | None = None
    reward_valid: bool | None = None
    config: dict[str, Any] | None = None

    @field_validator("started_at", "finished_at")
    @classmethod
    def _zone(cls, value: datetime | None) -> datetime | None:
        return _utc(value)

    def exceptions(self) -> list[HarborException]:
        """The trial's exception first, then each step's, in step order."""
        found = [self.exception_info] if self.exception_info else []
        found += [s.exception_info for s in self.step_results or [] if s.exception_info]
        return found

    def model_name(self) -> str:
        """The model, provider prefix dropped; the agent's name when it has no model."""
        if self.agent_info.model_info is not None:
            return self.agent_info.model_info.name
        agent_config = (self.config or {}).get("agent") or {}
        configured = agent_config.get("model_name")
        if isinstance(configured, str) and configured:
            return configured.rsplit("/", 1)[-1]
        return self.agent_info.name

    def reward(self) -> tuple[float | None, str | None]:
        """The verifier's reward and, when there is none to use, why."""
        rewards = self.verifier_result.rewards if self.verifier_result else None
        if not rewards:
            return None, "no reward recorded"
        if "reward" in rewards:
            value = rewards["reward"]
        elif len(rewards) == 1:
            value = next(iter(rewards.values()))
        else:
            return None, f"several rewards and none named 'reward': {sorted(rewards)}"
        if value is None or not math.isfinite(value):
            return None, f"reward is {value}"
        return float(value), None

    def counted(self, reward: float | None) -> bool:
        if reward is None:
            return False
        if self.reward_valid is not None:
            return self.reward_valid
        return all(exc.reward_stands() is not False for exc in self.exceptions())

    def tokens(self) -> tuple[int | None, int | None, int | None]:
        """(input, output, cached) over the trial, summed over steps for multi-step trials."""
        contexts = ([self.agent_result] if self.agent_result is not None
                    else [s.agent_result for s in self.step_results or [] if s.agent_result])
        totals: list[int | None] = [None, None, None]
        for ctx in contexts:
            for i, value in enumerate((ctx.n_input_tokens, ctx.n_output_tokens,
                                       ctx.n_cache_tokens)):
                if value is not None:
                    totals[i] = (totals[i] or 0) + value
        return totals[0], totals[1], totals[2]

    def metadata(self) -> dict[str, Any]:
        return (self.agent_result.metadata if self.agent_result else None) or {}

    def duration_s(self) -> float | None:
        if self.started_at is None or self.finished_at is None:
            return None
        return max(0.0, (self.finished_at - self.started_at).total_seconds())

"""The parity kit over the Pydantic AI adapter: every case through an agent run.

Each call is one ``Agent.run_sync`` whose ``FunctionModel`` asks for the tool call
(:class:`memquill_pydantic_ai.PydanticAIHarness`); the text and error flag are read from the
``ToolReturnPart`` the agent loop answered the model with, and compared with the core.
"""

from __future__ import annotations

from memquill.testing import ParitySuite
from memquill.testing._runner import HarnessFactory
from memquill_pydantic_ai import PydanticAIHarness


class TestPydanticAIParity(ParitySuite):
    def harness_factory(self) -> HarnessFactory:
        return PydanticAIHarness

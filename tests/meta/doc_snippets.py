"""Every fenced block of the README and ``docs/``, and how it is run: the reviewed table.

Keys are the blocks' names (``tests/doc_blocks.py``: file § heading: how the block begins).
``tests/meta/test_doc_snippets.py`` fails for a block missing here and for an entry whose block
is gone, so a new snippet is either run or listed with its reason. To add one: copy the key
from that failure, and pick a kind from ``tests/meta/snippet_kinds.py`` — ``Shell()`` for
``memquill …`` commands, ``Python()`` for code, ``NotRun("why")`` when it truly cannot run here.
"""

# The keys are the blocks' names, as long as they are: copied, never wrapped.
# ruff: noqa: E501

from __future__ import annotations

from tests.meta import doc_checks as checks
from tests.meta.doc_checks import ALL_TOOLS, READ_TOOLS, WRITE_TOOLS
from tests.meta.snippet_kinds import (
    Check,
    Elsewhere,
    McpConfig,
    NotRun,
    Python,
    Shell,
    Signature,
    Spec,
)

FAKES = "from tests.meta.doc_fakes import "
BENCHMARK = "a benchmark: minutes of work that measures, never asserts, and never runs beside tests"
CLONE_TESTS = (
    "tests/packaging/test_from_a_clone.py::test_the_readme_build_command_makes_every_distribution",
    "tests/packaging/test_fresh_install.py::test_the_readme_langchain_example_runs",
)
HOST_TEST = "tests/packaging/test_from_a_clone.py::test_a_host_starts_the_server_from_the_clone"
README_SYNC_TEST = (
    "tests/meta/test_readme_sync.py::test_the_readme_sync_instructions_work_verbatim_on_two_clones"
)
ANTHROPIC_EXAMPLE_TEST = (
    "tests/adapters/anthropic/test_anthropic_docs.py::test_the_example_runs_against_a_scripted_api"
)
ADK_EXAMPLE_TEST = "tests/adapters/adk/test_adk.py::test_the_example_runs_as_written"
KEY_PIPE_TEST = "tests/core/test_cli_sync.py::test_key_import_installs_adds_and_switches"
ENGINE = (
    "needs a container engine: tests/packaging/test_container.py builds and runs it where "
    "`docker info` answers; tests/meta/test_dockerfile.py checks its arguments everywhere"
)
# The README's second command-line block: the id and revisions it shows are the reader's own.
CLI_LOOKUPS = {
    "3f2a9c1e": '$(_mq id "Standup moved to 9:30")',
    "1a2b3c4d": '$(_mq rev "Standup moved to 9:30")',
    "5d6e7f80": "$(_mq store)",
}
MIDDLEWARE = (
    f"{FAKES}OfflineAgent, OfflineExtractor\n"
    "model, tools = OfflineAgent(), []\n"
    "extraction_chat_model = extraction_model = OfflineExtractor()\n"
)

SPECS: dict[str, Spec] = {
    # -- README.md ------------------------------------------------------------------------
    "README.md § Quickstart: pip install uv==0.13.8 && uv run memquill demo # the main jo": NotRun(
        "installs uv with the system's pip and runs the whole suite: what .ci/run does on a "
        "clean clone; `memquill demo` itself is tests/demo/test_demo.py"
    ),
    "README.md § Install: uv build --all-packages --out-dir dist # in the clone: the e": Elsewhere(
        CLONE_TESTS
    ),
    "README.md § The command line: source /path/to/memquill/.venv/bin/activate # the clone's en": Elsewhere(
        ("tests/meta/test_readme_commands.py::test_the_readme_command_block_runs_in_order",)
    ),
    "README.md § The command line: export MEMQUILL_WORKSPACE=~/notes # or pass --workspace DIR;": Elsewhere(
        ("tests/meta/test_readme_commands.py::test_the_readme_command_block_runs_in_order",)
    ),
    'README.md § The command line: echo "Standup moved to 9:30" | memquill remember - # the fac': Shell(
        # Where the first block leaves the reader: its workspace exported.
        env={"MEMQUILL_WORKSPACE": "{home}/notes"},
        swaps=CLI_LOOKUPS,
        servers={"memquill manage": "manage"},
        expect=(
            "saved ",
            "import would change nothing",
            "duplicate: store revision",
            "extraction jobs",
        ),
    ),
    "README.md § In Python: from memquill import MemoryToolset, open_session session = o": Python(
        expect=('"status":"saved"', "The user prefers tea over coffee.")
    ),
    "README.md § LangChain (`memquill-langchain`): # pip install memquill-langchain (until a release: from the ": Python(
        expect=("The user prefers tea over coffee.",)
    ),
    "README.md § LangChain (`memquill-langchain`): from langchain.agents import create_agent agent = create_age": Python(
        continues=True,
        prelude=f"{FAKES}OfflineAgent\nmodel = OfflineAgent()\n",
        after="reply = agent.invoke({'messages': [{'role': 'user', 'content': 'Hi'}]})\n"
        "assert reply['messages'][-1].content == 'Noted.'\n",
    ),
    "README.md § OpenAI Agents SDK (`memquill-openai-agents`): import tempfile from agents import Agent, RunConfig, Runner,": Python(
        expect=("Noted: oat milk.", "key:prefs/coffee")
    ),
    "README.md § Pydantic AI (`memquill-pydantic-ai`): import tempfile from pydantic_ai import Agent from pydantic_": Python(
        expect=("Noted: oat milk.", "key:prefs/coffee")
    ),
    "README.md § LangGraph store (`memquill-langchain[langgraph]`): # pip install 'memquill-langchain[langgraph,agents]' ([agent": Python(
        prelude=f"{FAKES}OfflineAgent\nmodel, tools = OfflineAgent(), []\n",
        after="reply = agent.invoke({'messages': [{'role': 'user', 'content': 'Hi'}]})\n"
        "assert reply['messages'][-1].content == 'Noted.'\n",
    ),
    "README.md § LlamaIndex (`memquill-llamaindex`): from llama_index.core.agent.workflow import FunctionAgent fr": Python(
        prelude=f"{FAKES}agent_llm\nllm = agent_llm()\n",
        after="answer = await agent.run(user_msg='Which tea do I like?', memory=memory)\n"
        "assert retriever.retrieve('tea')\n",
    ),
    "README.md § MCP hosts (`memquill-mcp`): uv run memquill-mcp --workspace ~/notes # in the clone: all ": Shell(
        cwd="repo", servers={"uv run memquill-mcp": "mcp-stdio"}
    ),
    'README.md § MCP hosts (`memquill-mcp`): { "mcpServers": { "memquill": { "command": "uv", "args": ["r': Elsewhere(
        (HOST_TEST,)
    ),
    'README.md § Sync across machines: cd "$MEMQUILL_WORKSPACE" # a clone of the repository your wo': Elsewhere(
        (README_SYNC_TEST,)
    ),
    "README.md § Sync across machines: memquill key export --stdout | ssh desktop memquill key impo": Elsewhere(
        (README_SYNC_TEST,)
    ),
    'README.md § Sync across machines: cd "$MEMQUILL_WORKSPACE" git add -A git diff --cached --quie': Elsewhere(
        (README_SYNC_TEST,)
    ),
    "README.md § Development: uv sync --locked # the eight packages (editable) and the dev": NotRun(
        "the developer's loop: syncs this checkout's own .venv, runs the whole suite and CI "
        "(.ci/run), benchmarks, and the regeneration that rewrites the parity cases"
    ),
    "README.md § Claude's memory tool (`memquill-anthropic`): import anthropic from memquill_anthropic import MemquillMemo": Elsewhere(
        (ANTHROPIC_EXAMPLE_TEST,)
    ),
    # -- docs/adapters/langgraph.md -------------------------------------------------------
    "docs/adapters/langgraph.md § LangGraph store: from pathlib import Path from memquill_langchain.store impor": Python(
        expect=(
            "('memories', 'ana') drink 2.9 {'content': 'Ana drinks oat flat whites.', 'since': 2026}",
        )
    ),
    "docs/adapters/langgraph.md § LangGraph store: # Memory records <!-- memory-records:v1 --> <!-- memory-reco": Elsewhere(
        (
            "tests/adapters/langgraph/test_langgraph_docs.py::test_the_store_and_agent_examples_run_as_written",
        )
    ),
    "docs/adapters/langgraph.md § With an agent, and LangMem: from langchain.agents import create_agent from langmem impor": Elsewhere(
        (
            "tests/adapters/langgraph/test_langgraph_docs.py::test_the_store_and_agent_examples_run_as_written",
        )
    ),
    'docs/adapters/langgraph.md § Options: MemquillStore(root, *, store=None, session_id="langgraph", l': Signature(
        "memquill_langchain.store"
    ),
    "docs/adapters/langgraph.md § Conformance: import pytest from langgraph.store.memory import InMemorySto": Elsewhere(
        ("tests/adapters/langgraph/test_langgraph_docs.py::test_the_conformance_example_passes",)
    ),
    "README.md § Google ADK (`memquill-adk`): import asyncio from google.adk.memory.memory_entry import Me": Elsewhere(
        (ADK_EXAMPLE_TEST,)
    ),
    # -- docs/adapters/adk.md --------------------------------------------------------------
    "docs/adapters/adk.md § The memory service: import asyncio from google.adk.memory.memory_entry import Me": Elsewhere(
        (ADK_EXAMPLE_TEST,)
    ),
    "docs/adapters/adk.md § An agent with memory: from google.adk.agents import LlmAgent from google.adk.model": Elsewhere(
        ("tests/adapters/adk/test_adk.py::test_the_agent_example_builds_its_runner",)
    ),
    # -- docs/adapters/anthropic.md ------------------------------------------------------
    "docs/adapters/anthropic.md § Claude's memory on memquill: import anthropic from memquill_anthropic import MemquillMemo": Elsewhere(
        (ANTHROPIC_EXAMPLE_TEST,)
    ),
    # -- docs/adapters/langchain.md -------------------------------------------------------
    "docs/adapters/langchain.md § An agent with memory: from langchain.agents import create_agent from memquill_lang": NotRun(
        "a real OpenAI model: needs langchain-openai, a key and the network; "
        "examples/langchain_agent.py runs this loop offline (the block below)"
    ),
    "docs/adapters/langchain.md § An agent with memory: uv run python examples/langchain_agent.py # offline, tempora": Elsewhere(
        (
            "tests/adapters/langchain/test_langchain_example.py::test_the_offline_agent_example_remembers_searches_and_corrects",
        )
    ),
    "docs/adapters/langchain.md § The toolkit: MemquillToolkit(*, session) MemquillToolkit.from_workspace( ": Signature(
        "memquill_langchain"
    ),
    "docs/adapters/langchain.md § The retriever: from memquill_langchain import MemquillRetriever retriever =": Python(
        after="assert isinstance(docs, list)\n"
    ),
    'docs/adapters/langchain.md § Re-ranking with your chat model: toolkit = MemquillToolkit.from_workspace("/home/me/notes", "': Python(
        prelude=f"from memquill_langchain import MemquillToolkit\n{FAKES}OfflineAgent\n"
        "chat_model = OfflineAgent()\n",
        after="print(toolkit.get_tools()[0].invoke({'query': 'deploys'}))\n",
        expect=("Using keyword order.",),
    ),
    "docs/adapters/langchain.md § Memory without a tool: `MemquillMiddleware`: from langchain.agents import create_agent from langgraph.che": Python(
        prelude=MIDDLEWARE, after="assert memory.wait(60)\n"
    ),
    # -- docs/adapters/openai-agents.md ---------------------------------------------------
    "docs/adapters/openai-agents.md § A runnable example: import tempfile from agents import Agent, RunConfig, Runner,": Python(
        expect=("Noted: oat milk.", "key:prefs/coffee", "Ana takes her coffee with oat milk.")
    ),
    "docs/adapters/openai-agents.md § Learning from the conversation: from memquill.lifecycle import Extraction from memquill_open": Python(
        continues=True,
        prelude=(
            "from memquill.testing._models import Reply, ScriptedTextModel\n"
            "extraction_model = ScriptedTextModel((Reply('[]'),))\n"
        ),
        after=(
            "import asyncio\n"
            "messages = asyncio.run(extraction.source.messages('chat-42'))\n"
            "assert [m.role for m in messages] == ['user', 'assistant', 'tool', 'assistant']\n"
        ),
    ),
    # -- docs/adapters/pydantic-ai.md -----------------------------------------------------
    "docs/adapters/pydantic-ai.md § A runnable example: import tempfile from pydantic_ai import Agent from pydantic_": Python(
        expect=("Noted: oat milk.", "key:prefs/coffee", "Ana takes her coffee with oat milk.")
    ),
    'docs/adapters/pydantic-ai.md § Instructions, and memory in them: memory = MemquillToolset.from_workspace("/home/me/notes", se': Python(
        continues=True, after="assert memory.id == 'memquill'\n"
    ),
    # -- docs/adapters/llamaindex.md ------------------------------------------------------
    "docs/adapters/llamaindex.md § A runnable example: from pathlib import Path from llama_index.core.llms import C": Python(
        expect=('"status":"saved"', "oolong", "<memquill>")
    ),
    "docs/adapters/llamaindex.md § A runnable example: uv run python examples/llamaindex_agent.py # temporary works": Elsewhere(
        (
            "tests/adapters/llamaindex/test_llamaindex_example.py::test_the_agent_example_remembers_searches_and_corrects",
        )
    ),
    "docs/adapters/llamaindex.md § A runnable example: from llama_index.core.agent.workflow import FunctionAgent fr": NotRun(
        "a real OpenAI model: needs llama-index-llms-openai, a key and the network; "
        "examples/llamaindex_agent.py runs this agent offline (the block above)"
    ),
    "docs/adapters/llamaindex.md § The tools: memquill_tools(session, *, query=None) -> list[FunctionTool]": Signature(
        "memquill_llamaindex"
    ),
    "docs/adapters/llamaindex.md § The retriever: from llama_index.core.query_engine import RetrieverQueryEngi": Python(
        continues=True, prelude=f"{FAKES}mock_llm\nllm = mock_llm()\n", after="assert nodes\n"
    ),
    "docs/adapters/llamaindex.md § The memory block: from llama_index.core.memory import Memory from memquill_lla": Python(
        continues=True,
        prelude="from llama_index.core.agent.workflow import FunctionAgent\n"
        f"{FAKES}agent_llm\n"
        "agent = FunctionAgent(tools=spec.to_tool_list(), llm=agent_llm())\n",
    ),
    "docs/adapters/llamaindex.md § Learning from flushed turns: from llama_index.core.storage.chat_store.sql import SQLAlche": Python(
        continues=True, prelude=f"{FAKES}OfflineExtractorLLM\nllm = OfflineExtractorLLM()\n"
    ),
    'docs/adapters/llamaindex.md § Re-ranking with your LLM: spec = MemquillToolSpec.from_workspace("/home/me/notes", "ch': Python(
        prelude="from llama_index.core import Settings\n"
        f"from memquill_llamaindex import MemquillToolSpec\n{FAKES}mock_llm\n"
        "Settings.llm = mock_llm()\n",
        after="assert len(spec.to_tool_list()) == 6\n",
    ),
    # -- docs/adapters/mcp.md -------------------------------------------------------------
    "docs/adapters/mcp.md § One line of host configuration: memquill-mcp --workspace ~/notes # all six tools over stdio ": Shell(
        servers={"memquill-mcp --workspace": "mcp-stdio"}, expect=("memquill-mcp 0.1.0",)
    ),
    'docs/adapters/mcp.md § One line of host configuration: { "mcpServers": { "memquill": { "command": "uv", "args": [ "': Elsewhere(
        (HOST_TEST,)
    ),
    'docs/adapters/mcp.md § One line of host configuration: { "mcpServers": { "memquill": { "command": "/Users/me/.local': McpConfig(
        {"memquill": ALL_TOOLS}
    ),
    'docs/adapters/mcp.md § One line of host configuration: { "mcpServers": { "memquill": { "command": "uvx", "args": ["': NotRun(
        "the package index path, after a release: memquill-mcp is not on the index yet "
        "(tests/adapters/mcp/test_mcp_docs.py checks that the server takes its arguments)"
    ),
    'docs/adapters/mcp.md § Reads auto-approved, writes still asking: { "mcpServers": { "memquill": { "command": "/Users/me/.local': McpConfig(
        {"memquill": READ_TOOLS, "memquill-write": WRITE_TOOLS}
    ),
    'docs/adapters/mcp.md § Reads auto-approved, writes still asking: { "permissions": { "allow": [ "mcp__memquill__memory_search"': Check(
        checks.read_permissions
    ),
    "docs/adapters/mcp.md § Plan mode: a switch the host can flip: memquill-mcp --workspace ~/notes --plan-mode-file ~/.memquil": Shell(
        servers={"memquill-mcp": "plan-mode"}
    ),
    "docs/adapters/mcp.md § Streamable HTTP: memquill-mcp --workspace ~/notes --transport http # http://1": Shell(
        # The machine is shared: a free port instead of the default one.
        swaps={"--transport http": "--transport http --port {port}"},
        servers={"memquill-mcp": "mcp-http"},
    ),
    'docs/adapters/mcp.md § Streamable HTTP: { "mcpServers": { "memquill": { "type": "http", "url": "http': McpConfig(
        {"memquill": ALL_TOOLS}, http_args=("--transport", "http")
    ),
    "docs/adapters/mcp.md § Streamable HTTP: mkdir -p ~/.config/memquill (umask 077; python3 -c 'import s": Shell(
        swaps={"--allow-remote": "--allow-remote --port {port}"},
        servers={"memquill-mcp": "mcp-http"},
    ),
    'docs/adapters/mcp.md § Streamable HTTP: { "mcpServers": { "memquill": { "type": "http", "url": "http #2': Check(
        checks.remote_host_config
    ),
    "docs/adapters/mcp.md § In a container: memquill-mcp --workspace /workspace --transport http --host ": Elsewhere(
        ("tests/meta/test_dockerfile.py::test_the_image_runs_exactly_what_the_docs_say",)
    ),
    "docs/adapters/mcp.md § In a container: docker build -t memquill-mcp . # in the clone export MEMQUIL": NotRun(
        ENGINE
    ),
    "docs/adapters/mcp.md § In a container: mkdir -p ~/.local/share/memquill docker run -d --name memqui": NotRun(
        ENGINE
    ),
    "docs/adapters/mcp.md § From Python: from memquill import open_session from memquill_mcp import b": Python(
        prelude=f"{FAKES}Host\nhost = Host()\n"
    ),
    "docs/adapters/mcp.md § Testing: .venv/bin/python benchmarks/mcp_load.py --clients 16 --calls": NotRun(
        BENCHMARK
    ),
    # -- docs/*.md ------------------------------------------------------------------------
    "docs/architecture.md § Architecture: plugins/ testing/ cli/ on top: hooks and the plugin-aware se": NotRun(
        "a diagram of the layers; tests/meta/test_architecture.py enforces them"
    ),
    "docs/errors.md § Errors: MemquillError root: catch this to catch everything memquill ": Check(
        checks.error_tree
    ),
    'docs/errors.md § How tools report errors: {"type":"memory_write_error","operation":"update","code":"co': Check(
        checks.conflict_error
    ),
    "docs/extraction.md § LangChain: `MemquillMiddleware` for `create_agent`: from langchain.agents import create_agent from langgraph.che": Python(
        prelude=MIDDLEWARE, after="assert memory.wait(60)\n"
    ),
    "docs/extraction.md § LlamaIndex: `MemquillMemoryBlock` in `Memory`: from llama_index.core.memory import Memory from llama_index.": Python(
        prelude=f"{FAKES}OfflineExtractorLLM\nllm = OfflineExtractorLLM()\n"
    ),
    "docs/extraction.md § The command line: memquill extract chat.jsonl --model myapp.models:extractor #": Shell(
        env={"MEMQUILL_WORKSPACE": "{home}/notes"},
        expect=("transcript: 3 finished turns", "completed attempts 1/3"),
    ),
    "docs/extraction.md § Any other host: from memquill import open_session from memquill.lifecycle im": Python(
        prelude="from pathlib import Path\n"
        "from memquill.lifecycle import RecordedMessages, SourceMessage\n"
        f"{FAKES}QuotingModel\n"
        "workspace = Path('/home/me/notes')\n"
        "my_source, my_text_model, my_gate = RecordedMessages(), QuotingModel(), lambda s: 'ready'\n"
        "session_id, user_message_id, assistant_message_id = 'chat-1', 'u1', 'a1'\n"
        "user_text, tool_calls, tool_outputs = 'I moved to Lisbon in March.', (), ()\n"
        "my_source.record(session_id, [SourceMessage('u1', 'user', user_text), "
        "SourceMessage('a1', 'assistant', 'Noted.')])\n",
        after="assert extraction.wait(60)\n",
    ),
    'docs/extraction.md § The ledger: {"version":1, "turns":["<turn id>", "..."], "counters":{"<se': Check(
        checks.ledger
    ),
    "docs/extraction.md § The status API: from memquill.lifecycle import job_status, retry_jobs view =": Python(
        continues=True, after="assert extraction.wait(60)\n"
    ),
    "docs/manage.md § The management page: pip install 'memquill[web]' # after a release; until then fr": Shell(
        skip={
            "pip install": "from the package index, after a release (the wheels: README, Install)"
        },
        swaps={"--port 8765": "--port {port}"},  # the machine is shared: a free port
        servers={"memquill manage": "manage"},
    ),
    'docs/manage.md § The HTTP API: { "revision": "<64 hex: the store revision>", "records": [{"': Check(
        checks.manage_state
    ),
    "docs/manage.md § Embedding the page: from memquill import open_session from memquill.manage impor": Python(
        prelude=f"{FAKES}Jobs\nmy_jobs_source = Jobs()\n", serves=True
    ),
    "docs/manage.md § The screenshot: MEMQUILL_UPDATE_SCREENSHOT=1 uv run pytest tests/manage/test": Elsewhere(
        ("tests/manage/test_browser.py::test_screenshot_for_the_docs",)
    ),
    "docs/model-assistance.md § Configuration: from langchain_openai import ChatOpenAI from memquill_langch": NotRun(
        "needs langchain-openai (not a dependency here) and an OpenAI key; "
        "tests/adapters/langchain/test_langchain_model.py wraps chat models the same way"
    ),
    "docs/model-assistance.md § Statuses: Memory ranking <status>: <reason>. Using keyword order.": NotRun(
        "the template of a status line; the parity cases pin every status's exact text"
    ),
    "docs/model-assistance.md § Unblocking: $ memquill enhance status --model myapp.models:reranker mode": NotRun(
        "output after a provider refused a real key; tests/core/test_cli_enhance.py checks it"
    ),
    'docs/model-assistance.md § Telemetry: """memquill model-assistance failures as OpenTelemetry spans': Elsewhere(
        (
            "tests/core/test_enhance_telemetry_recipes.py::test_the_docs_quote_the_recipes_verbatim",
            "tests/core/test_enhance_telemetry_recipes.py::test_opentelemetry_recipe_with_the_in_memory_exporter",
        )
    ),
    'docs/model-assistance.md § Telemetry: """memquill model-assistance failures as Sentry messages (a ': Elsewhere(
        (
            "tests/core/test_enhance_telemetry_recipes.py::test_the_docs_quote_the_recipes_verbatim",
            "tests/core/test_enhance_telemetry_recipes.py::test_sentry_recipe_through_a_real_client_transport",
        )
    ),
    "docs/multi-host.md § Setting it up: pip install 'memquill[postgres]' # psycopg 3 (the MCP server": NotRun(
        "needs a PostgreSQL server at that URL; tests/core/test_store_postgres.py runs the store "
        "and these commands against a throwaway cluster, and tests/core/test_cli_habits.py "
        "checks what `memquill where` shows of the URL (never its password)"
    ),
    "docs/multi-host.md § Against LangGraph's PostgresStore: export MEMQUILL_TEST_POSTGRES='postgresql://USER:PASSWORD@HO": NotRun(
        f"{BENCHMARK}; needs a PostgreSQL server and a role that may create databases"
    ),
    "docs/multi-host.md § People can still read and fix it: memquill export > records.md # byte-identical records.md # e": Shell(
        # The same commands on the file store: the store URL is the reader's own.
        env={"MEMQUILL_WORKSPACE": "{home}/notes"},
        swaps={"3f2a9c1e": "$(_mq store)"},
    ),
    "docs/multi-host.md § Where the truth lives, and what stays the same: UPDATE memquill.workspaces SET quota_bytes = 16777216 WHERE ": Elsewhere(
        (
            "tests/core/test_store_postgres_rows.py::test_a_workspace_is_not_bounded_by_2_mib_but_by_its_quota",
        )
    ),
    "docs/multi-host.md § Forgetting, honestly: VACUUM (FULL, VERBOSE) memquill.versions; -- rewrites the ta": NotRun(
        "PostgreSQL maintenance: needs a server"
    ),
    "docs/plugins.md § memquill_register_integrations(register: Callable[[IntegrationSpec], None]) -> None: from memquill import hookimpl from memquill.plugins import I": Elsewhere(
        (
            "tests/adapters/langgraph/test_langgraph_plugin.py::test_the_hook_example_in_the_plugin_docs_is_the_plugins_own",
        )
    ),
    "docs/plugins.md § memquill_register_integrations(register: Callable[[IntegrationSpec], None]) -> None: integrations (1): langgraph-store LangGraph BaseStore memqui": Elsewhere(
        (
            "tests/adapters/langgraph/test_langgraph_plugin.py::test_the_hook_example_in_the_plugin_docs_is_the_plugins_own",
        )
    ),
    "docs/plugins.md § Writing a plugin: # src/memquill_acme/plugin.py import re from memquill import": Python(
        after="import types\n"
        "from memquill.plugins import get_plugin_manager, registered_adapters, secret_scanner\n"
        "pm = get_plugin_manager(load_entrypoints=False)\n"
        "plugin = types.ModuleType('acme')\nplugin.__dict__.update(globals())\npm.register(plugin, name='acme')\n"
        "assert [a.name for a in registered_adapters(pm)] == ['acme']\n"
        "assert secret_scanner(pm).findings('key: acme_' + '0' * 32) == ('acme_key',)\n"
    ),
    'docs/plugins.md § Writing a plugin: # pyproject.toml [project.entry-points.memquill] acme = "mem': Check(
        checks.entry_point
    ),
    "docs/plugins.md § memquill_register_text_models(register: Callable[[Callable[[object], TextModel | None]], None]) -> None: from memquill import hookimpl def convert(model: object): fr": Python(
        prelude="import sys, types\n"
        "sys.modules['my_framework'] = types.SimpleNamespace(Model=type('Model', (), {}))\n"
        f"{FAKES}QuotingModel\n"
        "MyTextModel = lambda model: QuotingModel()\n",
        after="from memquill.plugins import get_plugin_manager, text_model\n"
        "pm = get_plugin_manager(load_entrypoints=False)\n"
        "plugin = types.ModuleType('my_plugin')\nplugin.__dict__.update(globals())\npm.register(plugin, name='my-framework')\n"
        "assert isinstance(text_model(sys.modules['my_framework'].Model(), pm), QuotingModel)\n",
    ),
    "docs/plugins.md § Using plugins from a host: from memquill import open_session from memquill.plugins impo": Python(
        after="assert 'memquill.builtin' in [p.name for p in report.plugins]\n"
    ),
    "docs/plugins.md § Using plugins from a host: pm = get_plugin_manager(load_entrypoints=False) # built-ins ": Python(
        continues=True, prelude="class MyFakePlugin:\n    pass\n"
    ),
    "docs/plugins.md § How failures are reported: $ memquill plugins plugins (2): acme (memquill-acme 1.0) mem": NotRun(
        "output with the example's memquill-acme installed (it does not exist); "
        "tests/core/test_cli_plugins.py checks this output"
    ),
    "docs/ranking.md § Recency: a bounded prior: recency = 1 - w * (1 - 2 ** (-age / h)) w = 0.2, h = 30 days": Check(
        checks.recency_formula
    ),
    "docs/ranking.md § Reproducing: uv run python benchmarks/retrieval_locomo.py PATH/TO/locomo1": NotRun(
        f"{BENCHMARK}; needs the LoCoMo data set, which is not in the repository"
    ),
    "docs/ranking.md § When to turn it on, and what it costs: python3.11 -m venv /tmp/semvenv /tmp/semvenv/bin/pip install": NotRun(
        f"{BENCHMARK}; needs a model installed outside the project and the LoCoMo data set"
    ),
    "docs/ranking.md § The confidence rule: measured: uv run python benchmarks/semantic_locomo.py PATH/TO/locomo10": NotRun(
        f"{BENCHMARK}; needs the LoCoMo data set, which is not in the repository"
    ),
    "docs/ranking.md § The confidence rule: measured: HF_HUB_OFFLINE=1 /tmp/semvenv/bin/python benchmarks/semantic": NotRun(
        f"{BENCHMARK}; needs a model installed outside the project and the LoCoMo data set"
    ),
    "docs/record-format.md § Layout: # Memory records⏎ ⏎ <!-- memory-records:v1 -->⏎ ⏎ <!-- memor": Check(
        checks.record_layout
    ),
    'docs/record-format.md § Revisions: import hashlib, os root = os.path.realpath("/path/to/workspa': Python(
        prelude="from memquill import RecordStore, open_session, MemoryToolset\n"
        "MemoryToolset(open_session('/path/to/workspace', 'chat-42')).call("
        "'memory_remember', {'content': 'I prefer dark roast coffee'})\n",
        after="assert hashlib.sha256(os.fsencode(root) + b'\\0' + raw).hexdigest() == "
        "RecordStore(root).snapshot().revision\n",
    ),
    "docs/search-index.md § Where it lives: memquill index # build or refresh now (progress bar on a ter": Shell(
        env={"MEMQUILL_WORKSPACE": "{home}/notes"},
        expect=("Indexed 2 notes", "freshness: ", "healthy"),
    ),
    "docs/search-index.md § Where it lives: Search index kept in memory only. The search index cannot be": Check(
        checks.index_on_a_full_disk
    ),
    "docs/search-index.md § When a server serves the workspace: memquill serve --workspace ~/notes & # until Ctrl-C or SIGTE": NotRun(
        "starts a server that runs until stopped; tests/core/test_cli_serve.py runs these "
        "commands against a real server and compares them with --no-server"
    ),
    "docs/search-index.md § Safety limits: Partial search: skipped 2 files larger than 512 KiB, 1 folde": Check(
        checks.partial_search
    ),
    "docs/search-index.md § Measurements: uv run python benchmarks/vault_scale.py --data ../shared/ben": NotRun(
        f"{BENCHMARK}; needs a data set outside the repository"
    ),
    "docs/search-index.md § Measurements: uv run python benchmarks/vault_scale.py --sizes 5000,20000 -": NotRun(
        f"{BENCHMARK}; needs a data set outside the repository"
    ),
    "docs/search-index.md § The cold path, whole process: uv run python benchmarks/vault_scale.py --sizes 1000,20000 -": NotRun(
        f"{BENCHMARK}; needs a data set outside the repository"
    ),
    "docs/search-index.md § The cold path, whole process: uv run python benchmarks/vault_scale.py --sizes 1000,20000 - #2": NotRun(
        f"{BENCHMARK}; needs a data set outside the repository"
    ),
    "docs/search-index.md § Memory of a warm process: uv run python benchmarks/vault_scale.py --sizes 20000 --data": NotRun(
        f"{BENCHMARK}; needs a data set outside the repository"
    ),
    "docs/search-index.md § Memory of a warm process: uv run python benchmarks/vault_scale.py --sizes 20000 --data #2": NotRun(
        f"{BENCHMARK}; needs a data set outside the repository"
    ),
    "docs/search-index.md § Memory of a warm process: uv run python benchmarks/vault_scale.py --sizes 20000 --data #3": NotRun(
        f"{BENCHMARK}; needs a data set outside the repository"
    ),
    "docs/search-index.md § Engine spike: tantivy postings: uv run python benchmarks/tantivy_spike.py --data ../shared/b": NotRun(
        f"{BENCHMARK}; needs a data set outside the repository"
    ),
    "docs/search-index.md § Where the time goes, and the least each part costs: uv run python benchmarks/search_floor.py --sizes 1000,20000 ": NotRun(
        f"{BENCHMARK}; needs a data set outside the repository"
    ),
    "docs/security.md § Forgotten means gone: memquill key export --stdout | ssh new-machine memquill key ": Elsewhere(
        (KEY_PIPE_TEST,)
    ),
    "docs/security.md § Power loss: the model the crash-state test checks: cut 13/13 after [update returned] (memory/: 0 of 2 pending e": Elsewhere(
        (
            "tests/core/crash_state/test_crash_states.py::test_the_checker_catches_a_missing_folder_fsync",
        )
    ),
    "docs/security.md § Power loss: the model the crash-state test checks: cut 8/8 after [remember returned] (no entry change pending):": Elsewhere(
        (
            "tests/core/crash_state/test_crash_states.py::test_the_checker_catches_a_missing_append_fsync",
        )
    ),
    "docs/security.md § Power loss: the model the crash-state test checks: uv run pytest -q -n 0 -s tests/core/crash_state": Elsewhere(
        (
            "tests/core/crash_state/test_crash_states.py::test_a_remember_survives_every_power_cut",
            "tests/core/crash_state/test_model.py::test_an_unsynced_append_tears_at_sector_boundaries",
        )
    ),
    # -- docs/sync.md (the README's blocks, run verbatim on two clones, and the key's) -------
    'docs/sync.md § Git: cd "$MEMQUILL_WORKSPACE" # a clone of the repository your wo': Elsewhere(
        (README_SYNC_TEST,)
    ),
    "docs/sync.md § Git: memquill key export --stdout | ssh desktop memquill key impo": Elsewhere(
        (README_SYNC_TEST,)
    ),
    'docs/sync.md § Git: cd "$MEMQUILL_WORKSPACE" git add -A git diff --cached --quie': Elsewhere(
        (README_SYNC_TEST,)
    ),
    "docs/sync.md § Diverged facts: diverged: fact 7c1e9a02 was corrected on two machines (kept ": NotRun(
        "output of `memquill sync status` for a fact corrected on two machines; "
        "tests/core/test_sync_git.py and tests/core/test_cli_sync.py check its lines"
    ),
    "docs/sync.md § Diverged facts: memquill sync keep 3b52d8e1 --revision 5d7e28a90c3f1b64": Elsewhere(
        ("tests/core/test_cli_sync.py::test_sync_keep_settles_a_diverged_fact",)
    ),
    "docs/sync.md § The record key: # from the laptop, straight into the desktop: the key never ": Elsewhere(
        (KEY_PIPE_TEST, README_SYNC_TEST)
    ),
    "docs/sync.md § The record key: memquill key export --output /media/usb/memquill-key.txt # a": Elsewhere(
        ("tests/core/test_cli_sync.py::test_key_export_to_a_new_private_file_only",)
    ),
    "docs/sync.md § The record key: record key: 12 record(s) were written under key 9f2c41d07a6b": Elsewhere(
        (
            "tests/core/test_cli_sync.py::test_doctor_names_records_written_under_a_key_this_machine_lacks",
        )
    ),
    'docs/tools.md § Results: {"type":"memory_write_receipt","operation":"update","status"': Check(
        checks.write_results
    ),
    'docs/tools.md § Ids, versions, keys and revisions: → memory_remember {"content": "The user takes coffee black."': Elsewhere(
        ("tests/meta/test_docs.py::test_the_key_transcript_in_tools_md_is_what_the_tools_answer",)
    ),
    "docs/tools.md § memory_recent: ## Active Memory Source: memory/records/<id>.md (memory-reco": Check(
        checks.recent_facts
    ),
    **{
        f"docs/tools.md § {name}: {opening}": Elsewhere(
            ("tests/meta/test_docs.py::test_every_tool_is_documented_with_its_schema",)
        )
        for name, opening in [
            ("memory_search", '{ "description": "Arguments of memory_search.", "properties"'),
            ("memory_get", '{ "description": "Arguments of memory_get.", "properties": {'),
            ("memory_recent", '{ "description": "Arguments of memory_recent.", "properties"'),
            ("memory_remember", '{ "additionalProperties": false, "description": "Arguments o'),
            ("memory_update", '{ "additionalProperties": false, "description": "Arguments o'),
            ("memory_forget", '{ "additionalProperties": false, "description": "Arguments o'),
        ]
    },
}

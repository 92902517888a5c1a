"""The vocabulary: every span attribute key and value agenteval-otel writes, and the standard
keys it reads, in one place. Constants only; every stage imports it, it imports nothing.

Keys of the OpenTelemetry GenAI semantic conventions come first, then the proposals we follow where
no standard exists yet (nodes, conditional edges), then our own ``agenteval.*`` keys, which are
always written so that reading our spans never depends on a moving standard. Keys that only one
third-party producer writes live with that producer's reader in ``trajectory/conventions/``;
the OpenInference keys we write beside the GenAI ones (``configure(conventions=...)``) are here.
"""

from __future__ import annotations

from typing import Final

# --- OpenTelemetry GenAI semantic conventions -----------------------------------------------
GEN_AI_OPERATION_NAME: Final = "gen_ai.operation.name"
GEN_AI_PROVIDER_NAME: Final = "gen_ai.provider.name"
GEN_AI_SYSTEM: Final = "gen_ai.system"  # older name of gen_ai.provider.name
GEN_AI_AGENT_NAME: Final = "gen_ai.agent.name"
GEN_AI_AGENT_ID: Final = "gen_ai.agent.id"
GEN_AI_AGENT_DESCRIPTION: Final = "gen_ai.agent.description"
GEN_AI_CONVERSATION_ID: Final = "gen_ai.conversation.id"
GEN_AI_TOOL_NAME: Final = "gen_ai.tool.name"
GEN_AI_TOOL_TYPE: Final = "gen_ai.tool.type"
GEN_AI_TOOL_DESCRIPTION: Final = "gen_ai.tool.description"
GEN_AI_TOOL_CALL_ID: Final = "gen_ai.tool.call.id"
GEN_AI_TOOL_CALL_ARGUMENTS: Final = "gen_ai.tool.call.arguments"
GEN_AI_TOOL_CALL_RESULT: Final = "gen_ai.tool.call.result"
GEN_AI_INPUT_MESSAGES: Final = "gen_ai.input.messages"
GEN_AI_OUTPUT_MESSAGES: Final = "gen_ai.output.messages"
GEN_AI_SYSTEM_INSTRUCTIONS: Final = "gen_ai.system_instructions"
GEN_AI_REQUEST_MODEL: Final = "gen_ai.request.model"
GEN_AI_REQUEST_TEMPERATURE: Final = "gen_ai.request.temperature"
GEN_AI_REQUEST_SEED: Final = "gen_ai.request.seed"
GEN_AI_REQUEST_TOP_P: Final = "gen_ai.request.top_p"
GEN_AI_REQUEST_MAX_TOKENS: Final = "gen_ai.request.max_tokens"
GEN_AI_REQUEST_FREQUENCY_PENALTY: Final = "gen_ai.request.frequency_penalty"
GEN_AI_REQUEST_PRESENCE_PENALTY: Final = "gen_ai.request.presence_penalty"
GEN_AI_REQUEST_STOP_SEQUENCES: Final = "gen_ai.request.stop_sequences"
GEN_AI_REQUEST_CHOICE_COUNT: Final = "gen_ai.request.choice.count"
GEN_AI_OUTPUT_TYPE: Final = "gen_ai.output.type"
GEN_AI_RESPONSE_ID: Final = "gen_ai.response.id"
GEN_AI_RESPONSE_MODEL: Final = "gen_ai.response.model"
GEN_AI_RESPONSE_FINISH_REASONS: Final = "gen_ai.response.finish_reasons"
GEN_AI_USAGE_INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
GEN_AI_USAGE_OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
GEN_AI_USAGE_PROMPT_TOKENS: Final = "gen_ai.usage.prompt_tokens"  # older name of input_tokens
GEN_AI_USAGE_COMPLETION_TOKENS: Final = "gen_ai.usage.completion_tokens"  # older name of output_tokens
GEN_AI_TOOL_DEFINITIONS: Final = "gen_ai.tool.definitions"
GEN_AI_WORKFLOW_NAME: Final = "gen_ai.workflow.name"
GEN_AI_INFERENCE_DETAILS_EVENT: Final = "gen_ai.client.inference.operation.details"
# message events (span events, or log records joined to their span), before the message attributes
GEN_AI_SYSTEM_MESSAGE_EVENT: Final = "gen_ai.system.message"
GEN_AI_USER_MESSAGE_EVENT: Final = "gen_ai.user.message"
GEN_AI_ASSISTANT_MESSAGE_EVENT: Final = "gen_ai.assistant.message"
GEN_AI_TOOL_MESSAGE_EVENT: Final = "gen_ai.tool.message"
GEN_AI_CHOICE_EVENT: Final = "gen_ai.choice"
GEN_AI_EVENT_CONTENT: Final = "gen_ai.event.content"  # the message as JSON, on some producers' events
GEN_AI_CONTENT_PROMPT_EVENT: Final = "gen_ai.content.prompt"  # oldest: the prompt list in gen_ai.prompt
GEN_AI_CONTENT_COMPLETION_EVENT: Final = "gen_ai.content.completion"
GEN_AI_PROMPT: Final = "gen_ai.prompt"
GEN_AI_COMPLETION: Final = "gen_ai.completion"
EVENTS_ATTRIBUTE: Final = "events"  # a JSON list of message events in one attribute (Logfire)
ERROR_TYPE: Final = "error.type"
SERVER_ADDRESS: Final = "server.address"
SERVER_PORT: Final = "server.port"
EXCEPTION_EVENT: Final = "exception"  # the span event the SDK's record_exception writes, and its attributes
EXCEPTION_TYPE: Final = "exception.type"
EXCEPTION_MESSAGE: Final = "exception.message"
EXCEPTION_STACKTRACE: Final = "exception.stacktrace"
EXCEPTION_ESCAPED: Final = "exception.escaped"

# gen_ai.operation.name values
OP_INVOKE_AGENT: Final = "invoke_agent"
OP_EXECUTE_TOOL: Final = "execute_tool"
OP_CHAT: Final = "chat"
OP_GENERATE_CONTENT: Final = "generate_content"
OP_TEXT_COMPLETION: Final = "text_completion"
OP_INVOKE_NODE: Final = "invoke_node"  # proposal: graph nodes have no standard operation yet

# gen_ai.provider.name and gen_ai.output.type values
PROVIDER_OPENAI: Final = "openai"
OUTPUT_TYPE_TEXT: Final = "text"
OUTPUT_TYPE_JSON: Final = "json"

# --- evaluation results (GenAI semantic conventions) ----------------------------------------
GEN_AI_EVALUATION_NAME: Final = "gen_ai.evaluation.name"
GEN_AI_EVALUATION_SCORE_VALUE: Final = "gen_ai.evaluation.score.value"
GEN_AI_EVALUATION_SCORE_LABEL: Final = "gen_ai.evaluation.score.label"
GEN_AI_EVALUATION_EXPLANATION: Final = "gen_ai.evaluation.explanation"
GEN_AI_EVALUATION_RESULT_EVENT: Final = "gen_ai.evaluation.result"
# gen_ai.evaluation.score.label values we write
EVALUATION_PASS: Final = "pass"
EVALUATION_FAIL: Final = "fail"

# --- OpenInference (written beside the GenAI keys when that convention is on) ----------------
OI_SPAN_KIND: Final = "openinference.span.kind"
OI_INPUT_VALUE: Final = "input.value"
OI_INPUT_MIME_TYPE: Final = "input.mime_type"
OI_OUTPUT_VALUE: Final = "output.value"
OI_OUTPUT_MIME_TYPE: Final = "output.mime_type"
OI_SESSION_ID: Final = "session.id"
OI_AGENT_NAME: Final = "agent.name"
OI_TOOL_NAME: Final = "tool.name"
OI_TOOL_DESCRIPTION: Final = "tool.description"
OI_TOOL_ID: Final = "tool.id"
OI_LLM_MODEL_NAME: Final = "llm.model_name"
OI_LLM_PROVIDER: Final = "llm.provider"
OI_LLM_SYSTEM: Final = "llm.system"
OI_LLM_TOKEN_COUNT_PROMPT: Final = "llm.token_count.prompt"
OI_LLM_TOKEN_COUNT_COMPLETION: Final = "llm.token_count.completion"
OI_LLM_TOKEN_COUNT_TOTAL: Final = "llm.token_count.total"
OI_LLM_INPUT_MESSAGES: Final = "llm.input_messages"  # flattened: llm.input_messages.{i}.message.role
OI_LLM_OUTPUT_MESSAGES: Final = "llm.output_messages"
# the suffixes of one flattened message, and of one tool call inside it (message.tool_calls.{j}.)
OI_MESSAGE_ROLE: Final = "message.role"
OI_MESSAGE_CONTENT: Final = "message.content"
OI_MESSAGE_TOOL_CALL_ID: Final = "message.tool_call_id"
OI_MESSAGE_TOOL_CALLS: Final = "message.tool_calls"
OI_TOOL_CALL_ID: Final = "tool_call.id"
OI_TOOL_CALL_FUNCTION_NAME: Final = "tool_call.function.name"
OI_TOOL_CALL_FUNCTION_ARGUMENTS: Final = "tool_call.function.arguments"
# openinference.span.kind values, and the MIME types of input.value / output.value
OI_KIND_AGENT: Final = "AGENT"
OI_KIND_CHAIN: Final = "CHAIN"
OI_KIND_TOOL: Final = "TOOL"
OI_KIND_LLM: Final = "LLM"
OI_KIND_EVALUATOR: Final = "EVALUATOR"
MIME_TEXT: Final = "text/plain"
MIME_JSON: Final = "application/json"

# --- proposals: graph nodes and conditional edges -------------------------------------------
GEN_AI_NODE_NAME: Final = "gen_ai.node.name"

# --- our own keys ---------------------------------------------------------------------------
STEP_TYPE: Final = "agenteval.step.type"  # node | tool | message | conditional | agent
CONDITION_NAME: Final = "agenteval.conditional.name"
CONDITION_VALUE: Final = "agenteval.conditional.value"
CONDITION_BRANCH: Final = "agenteval.conditional.branch"
AGENT_INPUT: Final = "agenteval.agent.input"
AGENT_OUTPUT: Final = "agenteval.agent.output"
NODE_INPUT: Final = "agenteval.node.input"
NODE_OUTPUT: Final = "agenteval.node.output"
MESSAGE_ROLE: Final = "agenteval.message.role"
MESSAGE_CONTENT: Final = "agenteval.message.content"
EVAL_SET_ID: Final = "agenteval.eval_set_id"
EVAL_ID: Final = "agenteval.eval_id"
EVAL_CRITERION: Final = "agenteval.evaluation.criterion"
EVAL_THRESHOLD: Final = "agenteval.evaluation.threshold"
EVAL_EVALUATOR_VERSION: Final = "agenteval.evaluation.evaluator_version"
EVAL_JUDGE_MODEL: Final = "agenteval.evaluation.judge_model"
EVAL_EVALUATION_ID: Final = "agenteval.evaluation.id"  # one verdict's stable id: same verdict, same id
EVAL_RUN_ID: Final = "agenteval.evaluation.run_id"  # the evaluation run that gave the verdict
EVALUATION_MARKER: Final = "agenteval.evaluation"  # marks our evaluation spans and records: never evaluated
EVAL_VERDICT_SCORE: Final = "agenteval.evaluation.{criterion}.score"  # on a live turn's root span (str.format)
EVAL_VERDICT_LABEL: Final = "agenteval.evaluation.{criterion}.label"
JUDGE_ATTEMPTS: Final = "agenteval.judge.attempts"  # requests made for one judge call (retries + 1)
JUDGE_RESPONSE_FORMAT: Final = "agenteval.judge.response_format"  # json_schema | json_object | text

# agenteval.step.type values
STEP_AGENT: Final = "agent"
STEP_NODE: Final = "node"
STEP_TOOL: Final = "tool"
STEP_MESSAGE: Final = "message"
STEP_CONDITIONAL: Final = "conditional"

"""The serving layer: a parser's events -> what an OpenAI-compatible server sends.

openai_adapter.py (DeltaStream, ChunkWriter, ResponsesEvents, chat_completion: chat-completion
deltas and Responses events), json_reader.py (an incremental JSON reader), json_dialect.py (Gemma's
json dialects rewritten as they arrive, for that reader), json_calls.py (JSON call bodies),
inline_calls.py (xml-inline and kv-lines call bodies, with the tag halves the generated module
declares), python_calls.py (python-call-list call bodies) and reasoning_split.py (an output's
reasoning apart from the rest of its raw text, for an engine whose tool parser reads what its
reasoning parser leaves). Users import the public names
from `chatparse.openai`, a facade over openai_adapter.py; the engine plugins (chatparse.plugins)
import these modules directly.

At module level the package imports only `chatparse.runtime` and the standard library: it reads
what a generated module declares and never compiles. Where it must turn a template name or dict
into a module (`DeltaStream("qwen3", ...)`), it calls the dict API (`chatparse.load_module`) lazily
inside that function; `regex` (the runtime's one dependency) is imported lazily where a pattern
must be read (a close's group names, a tail's rewind).
"""

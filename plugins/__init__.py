"""Engine plugins: chatparse's parsers inside vLLM and SGLang (opt-in; `pip install
'chatparse[vllm]'` or `'chatparse[sglang]'`). Importing this package imports no engine: each
engine's registration module is named by its entry point and imports the engine only when a
chatparse parser is selected."""

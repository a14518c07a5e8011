#!/bin/sh
# A stand-in coding agent for trying Flows out: it reads the prompt on stdin, works for a moment and
# reports a result as a JSON object on its last line (any other last line becomes the run's summary).
# Point FLOWS_LOCAL_AGENT_COMMAND at a real coding agent instead, for example `claude -p` or `codex exec -`.
prompt=$(cat)
echo "Run $FLOWS_RUN_ID of job $FLOWS_JOB_SLUG (model: ${FLOWS_MODEL:-default}, effort: ${FLOWS_EFFORT:-default})"
echo "Prompt: $prompt"
sleep 1
echo "Done."
printf '{"summary":"Read a prompt of %s characters.","workdir":"%s"}\n' "${#prompt}" "$PWD"

"""The offline engine behind `tools.preview`: the real program under the Pulumi SDK's mock runtime
(`mockrun`), Azure's computed answers that runtime gives (`azure_answers`, shared with the engine tier's
stand-in), and the policy pack over its real gRPC Analyzer interface (`analyzer`). A library, not a
command: `tools/` holds the commands a user runs, and the tests, benchmarks and `testbed/` use it too."""

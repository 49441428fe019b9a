package dev.sandbox.langchain4j;

import dev.langchain4j.code.CodeExecutionEngine;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.openai.OpenAiChatModel;
import dev.langchain4j.service.AiServices;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.tools.CodeLanguage;
import dev.sandbox.tools.SandboxTools;
import dev.sandbox.tools.ToolLimits;

/**
 * The README's LangChain4j examples (the regions tagged {@code langchain4j-tools} and {@code langchain4j-engine},
 * which the README copies); {@link ReadmeExamplesTest} runs them.
 */
public final class ReadmeExamples {
    private ReadmeExamples() {}

    /**
     * The AI service example, run by the test in a JVM of its own whose {@code OPENAI_BASE_URL} points at a scripted
     * server on loopback.
     *
     * @param args none
     */
    public static void main(String[] args) {
        // tag::langchain4j-tools[]
        interface Assistant {
            String chat(String message);
        }

        ChatModel model = OpenAiChatModel.builder()
                .baseUrl(System.getenv("OPENAI_BASE_URL")) // unset: OpenAI's own
                .apiKey(System.getenv("OPENAI_API_KEY"))
                .modelName("gpt-4.1-mini")
                .build();
        try (LocalSandboxProvider provider = LocalSandboxProvider.create();
                SandboxTools tools = SandboxTools.lazy(provider, SessionOptions.defaults(), ToolLimits.defaults())) {
            Assistant assistant = AiServices.builder(Assistant.class)
                    .chatModel(model)
                    .tools(SandboxToolbox.of(tools)) // run_command, run_code, read_file, write_file, list_files
                    .build();
            // blocks this thread while the model's tool calls run: never call it on an event loop
            System.out.println(assistant.chat("Which Python version does the sandbox have?"));
        }
        // end::langchain4j-tools[]
    }

    /** The code execution engine example. */
    static void engine() {
        // tag::langchain4j-engine[]
        try (LocalSandboxProvider provider = LocalSandboxProvider.create();
                SandboxTools tools = SandboxTools.lazy(provider, SessionOptions.defaults(), ToolLimits.defaults())) {
            CodeExecutionEngine shell = SandboxCodeExecutionEngine.of(tools, CodeLanguage.SHELL);
            System.out.println(shell.execute("echo $((6 * 7)); uname -s"));
            // exit code: 0
            // stdout:
            // 42
            // Linux
            // stderr: (empty)
        }
        // end::langchain4j-engine[]
    }
}

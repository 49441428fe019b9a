/**
 * LangChain4j on the sandbox: {@link dev.sandbox.langchain4j.SandboxCodeExecutionEngine}, LangChain4j's {@code
 * CodeExecutionEngine} running snippets in a sandbox, and {@link dev.sandbox.langchain4j.SandboxToolbox}, a class of
 * {@code @Tool} methods (run a command or a snippet, read, write and list files) for AI services. Both adapt {@code
 * dev.sandbox.tools.SandboxTools}, which bounds every call; both block the calling thread and refuse a non-blocking
 * one (see {@link dev.sandbox.langchain4j.SandboxToolbox}).
 *
 * <p>Nullness: every type in this package is non-null unless annotated {@link org.jspecify.annotations.Nullable}
 * ({@link org.jspecify.annotations.NullMarked}); NullAway checks it when the SDK is built.
 */
@NullMarked
package dev.sandbox.langchain4j;

import org.jspecify.annotations.NullMarked;

/**
 * LangChain4j on the sandbox: {@link dev.sandbox.langchain4j.SandboxCodeExecutionEngine}, LangChain4j's {@code
 * CodeExecutionEngine} running snippets in a sandbox, and {@link dev.sandbox.langchain4j.SandboxToolbox}, a class of
 * {@code @Tool} methods (run a command or a snippet, read, write and list files) for AI services. Both adapt {@code
 * dev.sandbox.tools.SandboxTools}, which bounds every call; both block the calling thread and refuse a non-blocking
 * one (see {@link dev.sandbox.langchain4j.SandboxToolbox}).
 */
package dev.sandbox.langchain4j;

package dev.sandbox.langchain4j;

import dev.sandbox.BackendException;
import dev.sandbox.SandboxTimeoutException;
import dev.sandbox.blocking.SandboxInterruptedException;
import dev.sandbox.tools.ToolLimits;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import reactor.core.Disposable;
import reactor.core.Exceptions;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Where LangChain4j's synchronous calls wait for the reactive tools: the thread check, the bounded wait, interrupts
 * and unwrapping.
 */
final class ToolCalls {
    private ToolCalls() {}

    /**
     * Subscribes to {@code answer} and waits for it at most the tool timeout plus {@link SandboxToolbox#WAIT_MARGIN}.
     * A wait that runs out or is interrupted cancels the subscription, which kills a running command.
     *
     * @throws IllegalStateException on a non-blocking thread, before anything is started
     */
    static String await(Mono<String> answer, ToolLimits limits, String tool) {
        if (Schedulers.isInNonBlockingThread()) {
            throw new IllegalStateException("the sandbox tool " + tool + " blocks until the sandbox answers and must"
                    + " not be called on the non-blocking thread '"
                    + Thread.currentThread().getName()
                    + "'; call the AI service from a thread that may block (for example"
                    + " Schedulers.boundedElastic() or a virtual thread), or use SandboxTools' reactive methods");
        }
        if (Thread.currentThread().isInterrupted()) {
            throw new SandboxInterruptedException(tool, null);
        }
        Duration wait = limits.timeout().plus(SandboxToolbox.WAIT_MARGIN);
        CompletableFuture<String> result = new CompletableFuture<>();
        Disposable subscription = answer.subscribe(
                result::complete,
                result::completeExceptionally,
                () -> result.completeExceptionally(new BackendException(tool + " completed without an answer", null)));
        try {
            return result.get(wait.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            subscription.dispose();
            throw new SandboxTimeoutException(tool, wait);
        } catch (InterruptedException e) {
            subscription.dispose();
            Thread.currentThread().interrupt();
            throw new SandboxInterruptedException(tool, e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            Throwable error = Exceptions.unwrap(cause != null ? cause : e);
            if (error instanceof Error err) {
                throw err;
            }
            if (error instanceof RuntimeException re) {
                re.addSuppressed(new Exception("the LangChain4j tool call that waited for " + tool));
                throw re;
            }
            throw new BackendException(tool + " failed", error);
        }
    }
}

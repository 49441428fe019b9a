/**
 * The local provider behind {@link dev.sandbox.local.LocalSandboxProvider}: {@code LocalSession} (a handle), {@code
 * LocalFiles} (plain file I/O, with {@code SessionRoot} resolving every path beneath the session root's descriptor and {@code LocalWatcher}
 * serving every watch from one watch service), and {@code LocalSessionState}, one session shared by all its handles.
 * Processes start through the launchers of {@code dev.sandbox.implementation.process}. Internal: not part of the
 * public API; the README's Development section describes the layout every provider shares.
 */
package dev.sandbox.implementation.local;

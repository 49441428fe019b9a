/** Internal: the sampling and checking behind {@code SandboxSession.stats}. Not part of the public API. */
@NullMarked
package dev.sandbox.implementation.stats;

import org.jspecify.annotations.NullMarked;

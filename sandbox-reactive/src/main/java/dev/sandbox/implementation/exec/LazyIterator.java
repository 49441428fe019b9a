package dev.sandbox.implementation.exec;

import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * An iterator that computes each element when it is asked for: {@link #advance()} returns the next one, or
 * {@code null} at the end.
 *
 * <pre>{@code
 * Iterator<String> words = new LazyIterator<>() {
 *     int i;
 *
 *     protected String advance() {
 *         return i < 3 ? "word" + i++ : null;
 *     }
 * };
 * }</pre>
 *
 * @param <T> the element type
 */
public abstract class LazyIterator<T> implements Iterator<T> {
    private T next;

    /** Creates the iterator; nothing is computed before the first {@link #hasNext()}. */
    protected LazyIterator() {}

    /**
     * Computes the next element.
     *
     * @return the element, or {@code null} when there are no more
     */
    protected abstract T advance();

    @Override
    public final boolean hasNext() {
        if (next == null) {
            next = advance();
        }
        return next != null;
    }

    @Override
    public final T next() {
        if (!hasNext()) {
            throw new NoSuchElementException();
        }
        T e = next;
        next = null;
        return e;
    }
}

package com.subsvc.client.layer;

import com.subsvc.client.ApiException;
import java.lang.reflect.InvocationTargetException;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.UUID;
import java.util.function.Function;

/**
 * Every item of every page of a list operation, each page fetched as the loop reaches it:
 *
 * <pre>{@code
 * for (Subscription s : Lists.all(cursor -> client.subscriptions().listSubscriptions(null, 100, cursor), SubscriptionList::getData)) { … }
 * }</pre>
 *
 * A page that cannot be fetched ends the loop with a {@link PageException} carrying the call's
 * ApiException (its code's type) as its cause.
 */
public final class Lists {
  private Lists() {}

  /** A list operation's call for the page after `cursor` (null for the first). */
  @FunctionalInterface
  public interface PageCall<P> {
    P fetch(UUID cursor) throws ApiException;
  }

  /** A page that could not be fetched, while iterating. */
  public static final class PageException extends RuntimeException {
    PageException(ApiException cause) {
      super(cause.getMessage(), cause);
    }

    @Override
    public synchronized ApiException getCause() {
      return (ApiException) super.getCause();
    }
  }

  public static <P, T> Iterable<T> all(PageCall<P> call, Function<P, List<T>> data) {
    return () -> new Iterator<T>() {
      private Iterator<T> items = null;
      private UUID cursor = null;
      private boolean last = false;

      @Override
      public boolean hasNext() {
        while (items == null || !items.hasNext()) {
          if (last) return false;
          P page;
          try {
            page = call.fetch(cursor);
          } catch (ApiException e) {
            throw new PageException(e);
          }
          items = data.apply(page).iterator();
          Object next = read(page, "getNextCursor");
          last = !Boolean.TRUE.equals(read(page, "getHasMore")) || next == null;
          cursor = next == null ? null : UUID.fromString(next.toString());
        }
        return true;
      }

      @Override
      public T next() {
        if (!hasNext()) throw new NoSuchElementException();
        return items.next();
      }
    };
  }

  /** A page's `hasMore` or `nextCursor`: every list model of the spec has both. */
  private static Object read(Object page, String getter) {
    try {
      return page.getClass().getMethod(getter).invoke(page);
    } catch (NoSuchMethodException | IllegalAccessException | InvocationTargetException e) {
      throw new IllegalArgumentException(page.getClass().getSimpleName() + " is not a page of a list operation", e);
    }
  }
}

package airflow_lineage.listener;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Spark's objects read by name, as py4j reads them for the Python capture.
 *
 * <p>Why reflection: a method returning a Scala collection has another signature on Scala 2.12
 * ({@code scala.collection.Seq}) than on 2.13 ({@code scala.collection.immutable.Seq}), and Spark's
 * plan classes change between releases. Compiled against none of them, one jar loads on every Spark
 * the project supports, and a method a release lacks costs the one detail read through it (the caller
 * catches), never the class.
 */
final class Scala {
    private static final Map<String, Method> METHODS = new ConcurrentHashMap<>();

    private Scala() {
    }

    /** {@code obj.name(args...)}: the public method of that name and arity. */
    static Object call(Object obj, String name, Object... args) {
        if (obj == null) {
            throw new IllegalArgumentException("no object to call " + name + " on");
        }
        Method method = find(obj.getClass(), name, args);
        try {
            return method.invoke(obj, args);
        } catch (java.lang.reflect.InvocationTargetException e) {
            Throwable cause = e.getCause();
            throw cause instanceof RuntimeException ? (RuntimeException) cause : new IllegalStateException(cause);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Whether {@code obj} has a public method {@code name} of that arity. */
    static boolean has(Object obj, String name, int arity) {
        for (Method m : obj.getClass().getMethods()) {
            if (m.getName().equals(name) && m.getParameterCount() == arity) {
                return true;
            }
        }
        return false;
    }

    /** The public method {@code name} that takes {@code args} (of an overloaded name, the one whose
     * parameter types the arguments fit: {@code get(String)} beside {@code get(UUID)}). */
    private static Method find(Class<?> cls, String name, Object[] args) {
        StringBuilder key = new StringBuilder(cls.getName()).append('#').append(name);
        for (Object arg : args) {
            key.append('/').append(arg == null ? "null" : arg.getClass().getName());
        }
        Method found = METHODS.get(key.toString());
        if (found != null) {
            return found;
        }
        for (Method m : cls.getMethods()) {
            if (m.getName().equals(name) && m.getParameterCount() == args.length && fits(m.getParameterTypes(), args)) {
                if (!java.lang.reflect.Modifier.isPublic(m.getDeclaringClass().getModifiers())) {
                    m.setAccessible(true);  // a public method of a private class (a Scala anonymous class)
                }
                METHODS.put(key.toString(), m);
                return m;
            }
        }
        throw new IllegalArgumentException(cls.getName() + " has no method " + name + "/" + args.length);
    }

    private static boolean fits(Class<?>[] types, Object[] args) {
        for (int i = 0; i < types.length; i++) {
            Class<?> type = types[i].isPrimitive() ? BOXED.get(types[i]) : types[i];
            if (args[i] != null && !type.isInstance(args[i])) {
                return false;
            }
        }
        return true;
    }

    private static final Map<Class<?>, Class<?>> BOXED = Map.of(int.class, Integer.class, long.class, Long.class,
            boolean.class, Boolean.class, double.class, Double.class, float.class, Float.class, short.class,
            Short.class, byte.class, Byte.class, char.class, Character.class);

    /** The class name without its package and Scala's trailing {@code $}. */
    static String simpleName(Object obj) {
        return shortClass(obj.getClass().getName());
    }

    static String shortClass(String name) {
        String simple = name.substring(name.lastIndexOf('.') + 1);
        while (simple.endsWith("$")) {
            simple = simple.substring(0, simple.length() - 1);
        }
        return simple;
    }

    /** A Scala {@code Option}'s value, or null. */
    static Object option(Object opt) {
        if (opt == null) {
            return null;
        }
        return (Boolean) call(opt, "isDefined") ? call(opt, "get") : null;
    }

    /** A Scala {@code Seq} as a list. */
    static List<Object> seq(Object seq) {
        List<Object> out = new ArrayList<>();
        if (seq == null) {
            return out;
        }
        int size = (Integer) call(seq, "size");
        for (int i = 0; i < size; i++) {
            out.add(call(seq, "apply", i));
        }
        return out;
    }

    /** A Scala {@code Map} (or a Java one) as string pairs; an entry that cannot be read is left out. */
    static Map<String, String> map(Object m) {
        Map<String, String> out = new LinkedHashMap<>();
        if (m instanceof Map) {
            for (Map.Entry<?, ?> e : ((Map<?, ?>) m).entrySet()) {
                out.put(String.valueOf(e.getKey()), String.valueOf(e.getValue()));
            }
            return out;
        }
        Object it = call(m, "iterator");
        while ((Boolean) call(it, "hasNext")) {
            Object pair = call(it, "next");
            out.put(String.valueOf(call(pair, "_1")), String.valueOf(call(pair, "_2")));
        }
        return out;
    }

    /** The object a Scala {@code object} compiles to ({@code Foo$.MODULE$}). */
    static Object module(String className) throws ReflectiveOperationException {
        return Class.forName(className + "$").getField("MODULE$").get(null);
    }
}

package airflow_lineage.listener;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * What the Python package knows and the listener needs, each with one home there: the write commands
 * and the save modes' names ({@code lineage/plan/writes.py}), what makes a location a URI
 * ({@code lineage/naming.is_uri}) and which Spark Connect keys are safe ({@code hooks/jvm_listener.KEY_PATTERN}).
 * {@code scripts/build_listener.py} writes them into the jar's {@code lineage.properties}; the rebuild test
 * holds the committed jar to the Python source.
 */
final class Known {
    static final String RESOURCE = "lineage.properties";

    private final Set<String> commands;
    private final Properties saveModes = new Properties();
    private final Pattern uriScheme;
    private final Pattern connectKey;

    private Known(Set<String> commands, Properties saveModes, Pattern uriScheme, Pattern connectKey) {
        this.commands = commands;
        this.saveModes.putAll(saveModes);
        this.uriScheme = uriScheme;
        this.connectKey = connectKey;
    }

    static Known load() throws IOException {
        Properties all = new Properties();
        try (InputStream in = Known.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IOException("the jar has no " + RESOURCE + ": build it with scripts/build_listener.py");
            }
            all.load(in);
        }
        Properties modes = new Properties();
        for (String key : all.stringPropertyNames()) {
            if (key.startsWith("savemode.")) {
                modes.setProperty(key.substring("savemode.".length()), all.getProperty(key));
            }
        }
        return new Known(Set.of(all.getProperty("commands", "").split(",")), modes,
                Pattern.compile(all.getProperty("uri_scheme")), Pattern.compile(all.getProperty("connect_key")));
    }

    /** A command whose target is a dataset; a view only when it is not a temporary one. */
    boolean isWrite(String command, Object plan) {
        if (command.equals("CreateViewCommand")) {
            return !String.valueOf(Scala.call(plan, "viewType")).contains("Temp");
        }
        return commands.contains(command);
    }

    /** A DataFrameWriter SaveMode as the document's write mode ("create" for an unknown one). */
    String saveMode(String mode) {
        return saveModes.getProperty(mode, "create");
    }

    /** {@code hdfs://nn/x}, {@code file:///x}: written through Hadoop's FileSystem; else a local path. */
    boolean isUri(String location) {
        return uriScheme.matcher(location).lookingAt();
    }

    /** A Spark Connect client's key that names a directory inside the base, never outside it. */
    boolean isSafeKey(String key) {
        return connectKey.matcher(key).matches();
    }
}

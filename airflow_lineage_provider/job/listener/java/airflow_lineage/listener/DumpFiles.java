package airflow_lineage.listener;

import java.io.IOException;
import java.io.OutputStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * The dump's two files, as {@code job/dump.py} writes them for the Python driver: {@code plans.jsonl}
 * (a record a line) and {@code result.json} (the outcome, written last: its presence means "finished").
 *
 * <p>A local directory is appended to record by record, so a crash keeps what came before; a URI
 * ({@code hdfs://}, {@code s3a://}, {@code file:///}) is written through Hadoop's FileSystem when the
 * application ends, as object stores cannot append.
 */
abstract class DumpFiles {
    static final String PLANS = "plans.jsonl";
    static final String RESULT = "result.json";

    abstract void record(String line) throws IOException;

    abstract void finish(String result) throws IOException;

    static DumpFiles open(String location, boolean uri, Object hadoopConf) throws IOException {
        return uri ? new Hadoop(location, hadoopConf) : new Local(location);
    }

    /** A directory on the driver's own disk. */
    static final class Local extends DumpFiles {
        private final Path dir;
        private final Writer plans;

        Local(String location) throws IOException {
            dir = Paths.get(location);
            Files.createDirectories(dir);
            plans = Files.newBufferedWriter(dir.resolve(PLANS), StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        }

        @Override
        void record(String line) throws IOException {
            plans.write(line);
            plans.write('\n');
            plans.flush();
        }

        @Override
        void finish(String result) throws IOException {
            plans.close();
            Path tmp = dir.resolve(RESULT + ".tmp");
            Files.write(tmp, result.getBytes(StandardCharsets.UTF_8));
            Files.move(tmp, dir.resolve(RESULT), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        }
    }

    /** A directory on any Hadoop-compatible file system, written at the end. */
    static final class Hadoop extends DumpFiles {
        private final org.apache.hadoop.fs.Path base;
        private final org.apache.hadoop.fs.FileSystem fs;
        private final StringBuilder buffer = new StringBuilder();

        Hadoop(String location, Object conf) throws IOException {
            base = new org.apache.hadoop.fs.Path(location.replaceAll("/+$", ""));
            fs = base.getFileSystem((org.apache.hadoop.conf.Configuration) conf);
        }

        @Override
        synchronized void record(String line) {
            buffer.append(line).append('\n');
        }

        @Override
        synchronized void finish(String result) throws IOException {
            fs.mkdirs(base);
            write(PLANS, buffer.toString());
            write(RESULT, result);  // last: its presence means "finished"
        }

        private void write(String name, String text) throws IOException {
            try (OutputStream out = fs.create(new org.apache.hadoop.fs.Path(base, name), true)) {
                out.write(text.getBytes(StandardCharsets.UTF_8));
            }
        }
    }
}

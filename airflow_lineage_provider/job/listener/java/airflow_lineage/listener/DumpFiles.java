package airflow_lineage.listener;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * The dump's files, as {@code job/dump.py} writes them for the Python driver: {@code plans.jsonl}
 * (a record a line) and {@code result.json} (the outcome, written last: its presence means "finished").
 * A Spark Connect key's dump is also sealed: {@code seal}, written just before {@code result.json}, holds
 * the HMAC-SHA256, under the client's secret, of the bytes of {@code plans.jsonl} then {@code result.json}
 * as written here; the client takes the records only when it matches ({@code hooks/spark_connect.py}).
 *
 * <p>A local directory is appended to record by record (opened for each record and closed, so no
 * dump holds a file open while it waits), and a crash keeps what came before; a URI ({@code hdfs://},
 * {@code s3a://}, {@code file:///}) is written through Hadoop's FileSystem when the application ends, as
 * object stores cannot append.
 */
abstract class DumpFiles {
    static final String PLANS = "plans.jsonl";
    static final String RESULT = "result.json";
    static final String SEAL = "seal";

    private final javax.crypto.Mac mac;

    DumpFiles(String secret) throws IOException {
        if (secret == null || secret.isEmpty()) {
            mac = null;
            return;
        }
        try {
            mac = javax.crypto.Mac.getInstance("HmacSHA256");
            mac.init(new javax.crypto.spec.SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
        } catch (java.security.GeneralSecurityException e) {
            throw new IOException("no HMAC-SHA256 to seal the dump with", e);
        }
    }

    abstract void record(String line) throws IOException;

    abstract void finish(String result) throws IOException;

    /** Remove what was written (an expired Spark Connect key), and its directories up to {@code root}. */
    abstract void discard(Path root) throws IOException;

    static DumpFiles open(String location, boolean uri, Object hadoopConf, String secret) throws IOException {
        return uri ? new Hadoop(location, hadoopConf, secret) : new Local(location, secret);
    }

    /** The bytes of one record line, as written, counted into the seal. */
    final synchronized byte[] sealed(String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        if (mac != null) {
            mac.update(bytes);
        }
        return bytes;
    }

    /** The seal's text (hex), or null for an unsealed dump: call once, after the last bytes. */
    final synchronized String seal() {
        if (mac == null) {
            return null;
        }
        StringBuilder hex = new StringBuilder();
        for (byte b : mac.doFinal()) {
            hex.append(String.format("%02x", b));
        }
        return hex.toString();
    }

    /** A directory on the driver's own disk. */
    static final class Local extends DumpFiles {
        private final Path dir;

        Local(String location, String secret) throws IOException {
            super(secret);
            dir = Paths.get(location);
            made();
        }

        /** The directory, made again when a reader removed an empty parent of it meanwhile (a worker that
         * read another key under the same prefix removes the directories that key leaves empty). */
        private void made() throws IOException {
            for (int attempt = 1; ; attempt++) {
                try {
                    Files.createDirectories(dir);
                    return;
                } catch (java.nio.file.NoSuchFileException e) {
                    if (attempt == 5) {
                        throw e;
                    }
                }
            }
        }

        @Override
        synchronized void record(String line) throws IOException {
            byte[] bytes = sealed(line + "\n");
            for (int attempt = 1; ; attempt++) {
                // NOFOLLOW_LINKS: a link planted in the base is never written through.
                try (OutputStream out = Files.newOutputStream(dir.resolve(PLANS), StandardOpenOption.CREATE,
                        StandardOpenOption.APPEND, LinkOption.NOFOLLOW_LINKS)) {
                    out.write(bytes);
                    return;
                } catch (java.nio.file.NoSuchFileException e) {
                    if (attempt == 5) {
                        throw e;
                    }
                    made();
                }
            }
        }

        @Override
        synchronized void finish(String result) throws IOException {
            made();
            // A dump with no write still has its (empty) plans.jsonl: "no records", not "no dump".
            Files.newOutputStream(dir.resolve(PLANS), StandardOpenOption.CREATE, StandardOpenOption.APPEND,
                    LinkOption.NOFOLLOW_LINKS).close();
            byte[] bytes = sealed(result);
            String seal = seal();
            if (seal != null) {
                move(seal.getBytes(StandardCharsets.UTF_8), SEAL);
            }
            move(bytes, RESULT);
        }

        private void move(byte[] bytes, String name) throws IOException {
            Path tmp = dir.resolve(name + ".tmp");
            Files.deleteIfExists(tmp);
            Files.write(tmp, bytes, StandardOpenOption.CREATE_NEW);
            Files.move(tmp, dir.resolve(name), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        }

        @Override
        synchronized void discard(Path root) throws IOException {
            Files.deleteIfExists(dir.resolve(PLANS));  // a link itself, never what it names
            for (Path d = dir; root != null && d != null && d.startsWith(root) && !d.equals(root); d = d.getParent()) {
                try {
                    Files.delete(d);  // only an empty one: another key may share it
                } catch (IOException e) {
                    return;
                }
            }
        }
    }

    /** A directory on any Hadoop-compatible file system, written at the end. */
    static final class Hadoop extends DumpFiles {
        private final org.apache.hadoop.fs.Path base;
        private final org.apache.hadoop.fs.FileSystem fs;
        private final StringBuilder buffer = new StringBuilder();

        Hadoop(String location, Object conf, String secret) throws IOException {
            super(secret);
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
            String plans = buffer.toString();
            sealed(plans);
            sealed(result);
            write(PLANS, plans);
            String seal = seal();
            if (seal != null) {
                write(SEAL, seal);
            }
            write(RESULT, result);  // last: its presence means "finished"
        }

        @Override
        synchronized void discard(Path root) {
            buffer.setLength(0);  // nothing was written yet
        }

        private void write(String name, String text) throws IOException {
            try (OutputStream out = fs.create(new org.apache.hadoop.fs.Path(base, name), true)) {
                out.write(text.getBytes(StandardCharsets.UTF_8));
            }
        }
    }
}

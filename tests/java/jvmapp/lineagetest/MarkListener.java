package lineagetest;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;

import org.apache.spark.SparkConf;
import org.apache.spark.sql.execution.QueryExecution;
import org.apache.spark.sql.util.QueryExecutionListener;

/**
 * A user's own query listener (spark.sql.queryExecutionListeners), to prove the hook keeps it beside the
 * provider's: appends each successful action's function name to the file the conf spark.lineagetest.mark names.
 */
public final class MarkListener implements QueryExecutionListener {
    private final String mark;

    public MarkListener(SparkConf conf) {
        this.mark = conf.get("spark.lineagetest.mark", "");
    }

    @Override
    public void onSuccess(String funcName, QueryExecution qe, long durationNs) {
        if (mark.isEmpty()) {
            return;
        }
        try {
            Files.write(Paths.get(mark), (funcName + "\n").getBytes(StandardCharsets.UTF_8),
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new RuntimeException(e);
        }
    }

    @Override
    public void onFailure(String funcName, QueryExecution qe, Exception exception) {
    }
}

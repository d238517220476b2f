package airflow_lineage.listener;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * One analyzed plan as a raw record ({@code lineage/plan/record.py}, {@code raw/1}): Spark's plan JSON,
 * and what that JSON loses, read from the plan's objects.
 *
 * <p>It reads what the Python capture's {@code job/jvm.py} reads, by the same names, so both producers
 * write one record for one write; {@code tests/integration/test_jvm_listener.py} holds their documents
 * equal. Which commands write, and how a save mode is named, come from {@code lineage/plan/writes.py}
 * through the jar's {@code lineage.properties} ({@code Known}).
 */
final class Describe {
    static final String RAW = "raw/1";
    private static final String[] CATALOG_FIELDS = {"catalogTable", "tableMeta", "table", "tableDesc"};
    // A plan's JSON holding one of these has a source only its JVM object names (JDBC, V2, a started stream).
    private static final Set<String> SOURCE_HINTS = Set.of("DataSourceV2Relation", "StreamingExecutionRelation",
            "StreamingDataSourceV2Relation");
    private static final Set<String> SOURCE_LEAVES = Set.of("LogicalRelation", "DataSourceV2Relation",
            "StreamingExecutionRelation", "StreamingDataSourceV2Relation", "StreamingDataSourceV2ScanRelation");
    // A JDBC URL's credentials never reach the dump: user info, and parameters that name a secret.
    // (The reader strips them again, by the project's full rules, before naming the dataset.)
    private static final Pattern USER_INFO = Pattern.compile("(?<=//)[^/?#@]*@");
    private static final Pattern SECRET_PARAM = Pattern.compile(
            "(?i)([?&;])(password|passwd|pwd|user|username|secret|token|accesskey|secretkey|access_key|secret_key"
            + "|apikey|api_key|credentials?|sessiontoken|session_token)=[^&;#]*");

    // The first words of the statements that write a query they hold: job/jvm.WRITE_HEADS (a test ties the two).
    static final Set<String> WRITE_HEADS = Set.of("ALTER", "CREATE", "DELETE", "INSERT", "MERGE", "REPLACE", "UPDATE");

    private final ObjectMapper mapper;
    private final Object session;
    private final Known known;
    private final Map<String, String> locations = new HashMap<>();

    Describe(ObjectMapper mapper, Object session, Known known) {
        this.mapper = mapper;
        this.session = session;
        this.known = known;
    }

    /** The command a {@code CommandResult} holds (EXECUTE IMMEDIATE ran it while analyzing). */
    static Object unwrap(Object plan) {
        return "CommandResult".equals(Scala.simpleName(plan)) ? Scala.call(plan, "commandLogicalPlan") : plan;
    }

    /**
     * The text of the {@code spark.sql} call that made a write, as written; "" for a DataFrame write
     * ({@code job/jvm.sql_text}). An insert keeps its statement's text in its own origin; a command the
     * analyzer makes anew (a CTAS, CREATE VIEW) only in its query's, which then starts with the write's head.
     * A DataFrame's query from {@code spark.sql("SELECT ...")} starts with the query itself: not the write's.
     */
    static String sqlText(Object plan) {
        try {
            Object write = unwrap(plan);
            Object own = Scala.option(Scala.call(Scala.call(write, "origin"), "sqlText"));
            if (own != null) {
                return String.valueOf(own);
            }
            // The query root only: a cached relation deeper down keeps the origin of the statement that first read it.
            List<Object> children = Scala.seq(Scala.call(write, "children"));
            children.addAll(Scala.seq(Scala.call(write, "innerChildren")));
            for (Object child : children) {
                Object origin = Scala.call(child, "origin");
                Object text = Scala.option(Scala.call(origin, "sqlText"));
                Object start = Scala.option(Scala.call(origin, "startIndex"));
                if (text != null && start != null) {
                    String whole = String.valueOf(text);
                    int at = Math.min(((Number) start).intValue(), whole.length());
                    if (WRITE_HEADS.contains(sqlHead(whole.substring(0, at)))) {
                        return whole;
                    }
                }
            }
        } catch (RuntimeException e) {  // the text annotates the write: its lineage stands without it
            return "";
        }
        return "";
    }

    /** The first word of {@code text}'s code (white space and comments, nested ones too, skipped), upper-cased. */
    static String sqlHead(String text) {
        int i = 0;
        int n = text.length();
        while (i < n) {
            if (Character.isWhitespace(text.charAt(i))) {
                i++;
            } else if (text.startsWith("--", i)) {
                int end = text.indexOf('\n', i);
                i = end < 0 ? n : end + 1;
            } else if (text.startsWith("/*", i)) {
                int depth = 0;
                do {
                    if (text.startsWith("/*", i)) {
                        depth++;
                        i += 2;
                    } else if (text.startsWith("*/", i)) {
                        depth--;
                        i += 2;
                    } else {
                        i++;
                    }
                } while (depth > 0 && i < n);
            } else {
                break;
            }
        }
        int start = i;
        while (i < n && (Character.isLetterOrDigit(text.charAt(i)) || text.charAt(i) == '_')) {
            i++;
        }
        return text.substring(start, i).toUpperCase(java.util.Locale.ROOT);
    }

    /** The record of one write: the head the listener event gives, the plan and its extras. */
    ObjectNode record(Object plan, ObjectNode head, List<String> warnings) {
        plan = unwrap(plan);
        ArrayNode parsed;
        try {
            parsed = (ArrayNode) mapper.readTree((String) Scala.call(plan, "toJSON"));
        } catch (java.io.IOException e) {
            throw new IllegalStateException("Spark's plan JSON could not be read: " + e.getMessage(), e);
        }
        ObjectNode extras = mapper.createObjectNode();
        extras.putObject("tables");
        extras.putObject("relations");
        try {
            List<JsonNode> nodes = allNodes(parsed);  // walked once: each reader first asks if it has work
            addTableLocations(nodes, extras);
            addPathRelations(plan, nodes, extras);
            addExpandProjections(plan, nodes, extras);
            addSourceRelations(plan, nodes, extras);
            ObjectNode write = writeDetails(plan);
            if (write != null) {
                extras.set("write", write);
            }
        } catch (RuntimeException e) {  // a reader failing costs the extras, not the record
            warnings.add("could not read locations from the JVM: " + e);
        }
        ObjectNode out = head.deepCopy();
        out.put("kind", known.isWrite(Scala.simpleName(plan), plan) ? "write" : "query");
        out.set("plan", parsed);
        out.set("extras", extras);
        return out;
    }

    // -- what a plan reads ------------------------------------------------------------------------

    private void addTableLocations(List<JsonNode> nodes, ObjectNode extras) {
        ObjectNode tables = (ObjectNode) extras.get("tables");
        for (JsonNode node : nodes) {
            for (String field : CATALOG_FIELDS) {
                JsonNode ident = node.path(field).path("identifier");
                if (!ident.isObject() || !ident.path("table").isTextual() || ident.path("table").asText().isEmpty()) {
                    continue;
                }
                String catalog = text(ident, "catalog", "spark_catalog");
                String database = text(ident, "database", "default");
                String table = ident.path("table").asText();
                String name = (catalog + "." + database + "." + table).toLowerCase(java.util.Locale.ROOT);
                if (!tables.has(name)) {
                    tables.put(name, location(database, table));
                }
            }
        }
    }

    /** A catalog table's storage location, asked of the session's external catalog once each. */
    String location(String database, String table) {
        String key = (database + "." + table).toLowerCase(java.util.Locale.ROOT);
        if (!locations.containsKey(key)) {
            String found = null;
            try {
                Object state = Scala.call(session, "sessionState");
                Object external = Scala.call(Scala.call(state, "catalog"), "externalCatalog");
                found = String.valueOf(Scala.call(Scala.call(external, "getTable", database, table), "location"));
            } catch (RuntimeException e) {  // no such table (yet): no location
                found = null;
            }
            locations.put(key, found);
        }
        return locations.get(key);
    }

    private void addPathRelations(Object plan, List<JsonNode> nodes, ObjectNode extras) {
        if (nodes.stream().noneMatch(n -> (cls(n).equals("LogicalRelation") && absent(n.get("catalogTable")))
                || cls(n).equals("StreamingRelation"))) {
            return;
        }
        ObjectNode relations = (ObjectNode) extras.get("relations");
        for (Object node : jvmNodes(plan)) {
            String name = Scala.simpleName(node);
            List<String> paths = new ArrayList<>();
            String format;
            if (name.equals("LogicalRelation") && Scala.option(Scala.call(node, "catalogTable")) == null) {
                Object relation = Scala.call(node, "relation");
                if (!Scala.simpleName(relation).equals("HadoopFsRelation")) {
                    continue;
                }
                for (Object root : Scala.seq(Scala.call(Scala.call(relation, "location"), "rootPaths"))) {
                    paths.add(String.valueOf(root));
                }
                format = String.valueOf(Scala.call(relation, "fileFormat"));
            } else if (name.equals("StreamingRelation")) {
                Object source = Scala.call(node, "dataSource");
                for (Object p : Scala.seq(Scala.call(source, "paths"))) {
                    paths.add(String.valueOf(p));
                }
                Object option = Scala.option(Scala.call(Scala.call(source, "options"), "get", "path"));
                if (paths.isEmpty() && option != null) {
                    paths.add(String.valueOf(option));
                }
                format = String.valueOf(Scala.call(source, "className"));
            } else {
                continue;
            }
            ObjectNode rel = relations.putObject(firstOutput(node));
            ArrayNode list = rel.putArray("paths");
            paths.forEach(list::add);
            rel.put("format", format);
        }
    }

    private void addExpandProjections(Object plan, List<JsonNode> nodes, ObjectNode extras) {
        if (nodes.stream().noneMatch(n -> cls(n).equals("Expand")
                && (n.get("projections") == null || n.get("projections").isNull()))) {
            return;
        }
        ObjectNode found = extras.putObject("expand");
        for (Object node : jvmNodes(plan)) {
            if (!Scala.simpleName(node).equals("Expand")) {
                continue;
            }
            ArrayNode rows = found.putArray(firstOutput(node));
            for (Object row : Scala.seq(Scala.call(node, "projections"))) {
                ArrayNode out = rows.addArray();
                for (Object expression : Scala.seq(row)) {
                    try {
                        out.add(mapper.readTree((String) Scala.call(expression, "toJSON")));
                    } catch (java.io.IOException e) {
                        throw new IllegalStateException(e);
                    }
                }
            }
        }
    }

    private void addSourceRelations(Object plan, List<JsonNode> nodes, ObjectNode extras) {
        if (nodes.stream().noneMatch(n -> SOURCE_HINTS.contains(cls(n))
                || (cls(n).equals("LogicalRelation") && absent(n.get("relation")) && absent(n.get("catalogTable"))))) {
            return;
        }
        ObjectNode relations = (ObjectNode) extras.get("relations");
        for (Object node : jvmNodes(plan)) {
            String name = Scala.simpleName(node);
            if (!SOURCE_LEAVES.contains(name)) {
                continue;
            }
            try {
                ObjectNode info = describeSource(node);
                if (info != null && Scala.seq(Scala.call(node, "output")).size() > 0) {
                    String key = firstOutput(node);
                    JsonNode before = relations.get(key);
                    if (before instanceof ObjectNode) {
                        ((ObjectNode) before).setAll(info);
                    } else {
                        relations.set(key, info);
                    }
                }
            } catch (RuntimeException e) {  // a source we cannot read is named by what the JSON has
                ArrayNode warnings = extras.has("source_warnings")
                        ? (ArrayNode) extras.get("source_warnings") : extras.putArray("source_warnings");
                warnings.add("could not read the source of " + name + ": " + e);
            }
        }
    }

    private ObjectNode describeSource(Object node) {
        String name = Scala.simpleName(node);
        if (name.equals("LogicalRelation")) {
            Object relation = Scala.call(node, "relation");
            if (relation.getClass().getName().contains("JDBCRelation")) {
                ObjectNode out = mapper.createObjectNode();
                out.set("jdbc", jdbcOptions(Scala.call(relation, "jdbcOptions")));
                return out;
            }
            return null;
        }
        if (name.equals("DataSourceV2Relation") || name.startsWith("StreamingDataSourceV2")) {
            return describeV2Table(Scala.call(node, "table"), Scala.call(node, "catalog"), Scala.call(node, "identifier"));
        }
        if (name.equals("StreamingExecutionRelation")) {
            String text = String.valueOf(Scala.call(node, "source"));
            ObjectNode out = mapper.createObjectNode();
            if (text.startsWith("FileStreamSource[") && text.endsWith("]")) {
                out.putArray("paths").add(text.substring("FileStreamSource[".length(), text.length() - 1));
                out.put("format", "stream");
            } else {
                out.put("table", text);
            }
            return out;
        }
        return null;
    }

    private ObjectNode describeV2Table(Object table, Object catalog, Object identifier) {
        String label = null;
        Object cat = catalog == null ? null : Scala.option(catalog);
        Object ident = identifier == null ? null : Scala.option(identifier);
        if (cat != null && ident != null) {
            label = (Scala.call(cat, "name") + "." + ident).toLowerCase(java.util.Locale.ROOT);
        }
        ObjectNode out = mapper.createObjectNode();
        out.put("table", label != null ? label : String.valueOf(Scala.call(table, "name")).toLowerCase(java.util.Locale.ROOT));
        if (table.getClass().getName().contains("JDBCTable")) {
            ObjectNode jdbc = jdbcOptions(Scala.call(table, "jdbcOptions"));
            jdbc.put("table", String.valueOf(Scala.call(table, "name")));
            out.set("jdbc", jdbc);
        } else {
            Object properties = Scala.call(table, "properties");
            Object location = properties instanceof Map ? ((Map<?, ?>) properties).get("location") : null;
            if (location != null && !String.valueOf(location).isEmpty()) {
                out.putArray("paths").add(String.valueOf(location));
            }
        }
        return out;
    }

    private ObjectNode jdbcOptions(Object options) {
        String table = String.valueOf(Scala.call(options, "tableOrQuery"));
        int cut = table.lastIndexOf(") SPARK_GEN_SUBQ_");
        if (table.startsWith("(") && cut > 0) {  // the query option
            table = table.substring(1, cut);
        }
        ObjectNode out = mapper.createObjectNode();
        out.put("url", stripCredentials(String.valueOf(Scala.call(options, "url"))));
        out.put("table", table);
        return out;
    }

    static String stripCredentials(String url) {
        return SECRET_PARAM.matcher(USER_INFO.matcher(url).replaceAll("")).replaceAll("$1")
                .replaceAll("[?&;]+$", "").replace("?&", "?").replace("&&", "&");
    }

    // -- what a write command writes --------------------------------------------------------------

    /** The record's {@code write}: where the command writes and how; null when its JSON tells all. */
    ObjectNode writeDetails(Object plan) {
        String name = Scala.simpleName(plan);
        ObjectNode out = mapper.createObjectNode();
        switch (name) {
            case "InsertIntoHadoopFsRelationCommand":
                out.put("path", String.valueOf(Scala.call(plan, "outputPath")));
                out.put("mode", lower(Scala.call(plan, "mode")));
                putMap(out, "static_partitions", Scala.call(plan, "staticPartitions"));
                return out;
            case "CreateDataSourceTableAsSelectCommand": {
                Object ident = Scala.call(Scala.call(plan, "table"), "identifier");
                out.put("location", location(database(ident), String.valueOf(Scala.call(ident, "table"))));
                out.put("mode", known.saveMode(String.valueOf(Scala.call(plan, "mode"))));
                return out;
            }
            case "InsertIntoHiveTable": {
                Object ident = Scala.call(Scala.call(plan, "table"), "identifier");
                out.put("location", location(database(ident), String.valueOf(Scala.call(ident, "table"))));
                out.put("mode", (Boolean) Scala.call(plan, "overwrite") ? "overwrite" : "append");
                putMap(out, "static_partitions", Scala.call(plan, "partition"));
                return out;
            }
            case "InsertIntoDataSourceDirCommand": {
                Object uri = Scala.option(Scala.call(Scala.call(plan, "storage"), "locationUri"));
                out.put("path", uri == null ? null : String.valueOf(uri));
                out.put("mode", "overwrite");
                return out;
            }
            case "SaveIntoDataSourceCommand": {
                Map<String, String> options = Scala.map(Scala.call(plan, "options"));
                String source = Scala.call(plan, "dataSource").getClass().getName();
                if (source.toLowerCase(java.util.Locale.ROOT).contains("jdbc") || options.containsKey("url")) {
                    ObjectNode jdbc = out.putObject("jdbc");
                    jdbc.put("url", stripCredentials(options.getOrDefault("url", "")));
                    jdbc.put("table", options.containsKey("dbtable") ? options.get("dbtable") : options.get("query"));
                    out.put("mode", lower(Scala.call(plan, "mode")));
                    return out;
                }
                out.put("path", options.get("path"));
                out.put("mode", lower(Scala.call(plan, "mode")));
                out.put("format", source);
                return out;
            }
            case "CreateViewCommand": {
                List<Object> given = Scala.seq(Scala.call(plan, "userSpecifiedColumns"));
                if (!given.isEmpty()) {
                    ArrayNode columns = out.putArray("columns");
                    for (Object pair : given) {
                        columns.add(String.valueOf(Scala.call(pair, "_1")));
                    }
                }
                return out;
            }
            case "AppendData":
            case "OverwriteByExpression":
            case "OverwritePartitionsDynamic":
                out.setAll(v2Target(plan));
                out.put("mode", name.equals("AppendData") ? "append" : "overwrite");
                out.put("location", firstPath(out));
                return out;
            case "ReplaceData":
            case "WriteDelta":
            case "InsertOnlyMerge":
                out.setAll(v2Target(plan));
                out.put("location", firstPath(out));
                return out;
            case "CreateTableAsSelect":
            case "ReplaceTableAsSelect": {
                Object resolved = Scala.call(plan, "name");
                Object catalog = Scala.call(resolved, "catalog");
                Object ident = Scala.call(resolved, "identifier");
                out.put("table", (Scala.call(catalog, "name") + "." + ident).toLowerCase(java.util.Locale.ROOT));
                out.put("mode", name.startsWith("Create") ? "create" : "overwrite");
                try {
                    ObjectNode loaded = describeV2Table(Scala.call(catalog, "loadTable", ident), null, null);
                    loaded.remove("table");
                    out.setAll(loaded);
                } catch (RuntimeException e) {  // the table may not exist yet
                    // nothing more to read
                }
                return out;
            }
            case "WriteToMicroBatchDataSourceV1":
            case "WriteToMicroBatchDataSource": {
                boolean v1 = name.endsWith("V1");
                out.put("mode", lower(Scala.call(plan, "outputMode")).replaceAll("\\$+$", ""));
                Object table = v1 ? Scala.option(Scala.call(plan, "catalogTable")) : null;
                if (table != null) {
                    Object ident = Scala.call(table, "identifier");
                    String db = database(ident);
                    String bare = String.valueOf(Scala.call(ident, "table"));
                    out.put("table", ("spark_catalog." + db + "." + bare).toLowerCase(java.util.Locale.ROOT));
                    out.put("location", location(db, bare));
                }
                String sink = String.valueOf(Scala.call(plan, v1 ? "sink" : "write"));
                if (sink.startsWith("FileSink[") && sink.endsWith("]")) {
                    out.put("path", sink.substring("FileSink[".length(), sink.length() - 1));
                } else if (!out.has("table")) {
                    out.put("sink", sink);
                }
                return out;
            }
            default:
                return null;  // the command's JSON tells all (job/jvm.py NO_READER says why, per command)
        }
    }

    private ObjectNode v2Target(Object plan) {
        Object target = Scala.call(plan, "table");
        if (!Scala.simpleName(target).equals("DataSourceV2Relation")) {
            return mapper.createObjectNode();
        }
        return describeV2Table(Scala.call(target, "table"), Scala.call(target, "catalog"), Scala.call(target, "identifier"));
    }

    private static String firstPath(ObjectNode out) {
        JsonNode paths = out.get("paths");
        return paths != null && paths.size() > 0 ? paths.get(0).asText() : null;
    }

    private static String database(Object ident) {
        Object db = Scala.option(Scala.call(ident, "database"));
        return db == null ? "default" : String.valueOf(db);
    }

    private static String lower(Object value) {
        return String.valueOf(value).toLowerCase(java.util.Locale.ROOT);
    }

    private static void putMap(ObjectNode out, String key, Object scalaMap) {
        ObjectNode node = out.putObject(key);
        try {
            Scala.map(scalaMap).forEach(node::put);
        } catch (RuntimeException e) {  // a map that cannot be walked is an empty one
            node.removeAll();
        }
    }

    // -- walking plans --------------------------------------------------------------------------------

    /** Every JSON object of a plan's JSON that is a tree node, nested plans and expressions included. */
    static List<JsonNode> allNodes(JsonNode flat) {
        List<JsonNode> out = new ArrayList<>();
        Deque<JsonNode> stack = new ArrayDeque<>();
        stack.push(flat);
        while (!stack.isEmpty()) {
            JsonNode item = stack.pop();
            if (item.isObject() && item.has("class")) {
                out.add(item);
            }
            if (item.isContainerNode()) {
                Iterator<JsonNode> it = item.elements();
                while (it.hasNext()) {
                    JsonNode child = it.next();
                    if (child.isContainerNode()) {
                        stack.push(child);
                    }
                }
            }
        }
        return out;
    }

    /** Pre-order walk of a plan: children, and plans held as inner children. */
    static List<Object> jvmNodes(Object plan) {
        List<Object> out = new ArrayList<>();
        Deque<Object> stack = new ArrayDeque<>();
        stack.push(plan);
        while (!stack.isEmpty()) {
            Object node = stack.pop();
            out.add(node);
            for (String field : new String[] {"children", "innerChildren"}) {
                for (Object child : Scala.seq(Scala.call(node, field))) {
                    if (child != null && Scala.has(child, "children", 0)) {
                        stack.push(child);
                    }
                }
            }
        }
        return out;
    }

    private static String firstOutput(Object node) {
        Object first = Scala.call(Scala.call(node, "output"), "apply", 0);
        return String.valueOf(Scala.call(Scala.call(first, "exprId"), "id"));
    }

    private static String cls(JsonNode node) {
        return Scala.shortClass(node.path("class").asText());
    }

    private static boolean absent(JsonNode value) {
        // Python's falsy: missing, null, "", an empty object or list
        return value == null || value.isNull() || (value.isTextual() && value.asText().isEmpty())
                || (value.isContainerNode() && value.size() == 0);
    }

    private static String text(JsonNode node, String field, String fallback) {
        JsonNode value = node.get(field);
        return value == null || value.isNull() || value.asText().isEmpty() ? fallback : value.asText();
    }
}

package lineagetest;

import java.util.*;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.connector.catalog.*;
import org.apache.spark.sql.connector.expressions.Expressions;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.read.*;
import org.apache.spark.sql.connector.write.*;
import org.apache.spark.sql.types.*;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A small in-memory catalog of tables with row-level support, for the project's tests only.
 *
 * Iceberg and Delta jars cannot be downloaded where the tests run, yet lineage must be proven on the
 * plans Spark's analyzer makes for tables that support MERGE, UPDATE and DELETE: ReplaceData
 * (copy-on-write) and WriteDelta (merge-on-read). A table's mode is its property {@code write.mode}:
 * {@code copy-on-write} (the default) or {@code merge-on-read}.
 *
 * Data lives in this JVM (static maps), and writers hand their rows to the driver through it too:
 * local mode only, which is all the tests use. Every table has the metadata columns {@code _file}
 * and {@code _pos}, as file formats do; {@code _pos} is unique in a table and is the row id of a
 * merge-on-read delta.
 */
public class RowLevelCatalog implements TableCatalog, SupportsNamespaces {
    static final Map<String, MemTable> TABLES = new ConcurrentHashMap<>();
    static final Set<String> NAMESPACES = ConcurrentHashMap.newKeySet();
    static final Map<String, List<Object[]>> STAGED = new ConcurrentHashMap<>();
    private String name;

    @Override public void initialize(String name, CaseInsensitiveStringMap options) { this.name = name; }
    @Override public String name() { return name; }

    static String key(Identifier ident) { return String.join(".", ident.namespace()) + "." + ident.name(); }

    @Override public Identifier[] listTables(String[] namespace) {
        String prefix = String.join(".", namespace) + ".";
        return TABLES.keySet().stream().filter(k -> k.startsWith(prefix) && !k.substring(prefix.length()).contains("."))
            .map(k -> Identifier.of(namespace, k.substring(prefix.length()))).toArray(Identifier[]::new);
    }

    @Override public Table loadTable(Identifier ident) throws org.apache.spark.sql.catalyst.analysis.NoSuchTableException {
        MemTable table = TABLES.get(key(ident));
        if (table == null) throw new org.apache.spark.sql.catalyst.analysis.NoSuchTableException(ident);
        return table;
    }

    @Override public Table createTable(Identifier ident, Column[] columns, Transform[] partitions, Map<String, String> properties) {
        StructType schema = new StructType();
        for (Column c : columns) schema = schema.add(c.name(), c.dataType(), c.nullable());
        MemTable table = new MemTable(key(ident), schema, properties);
        TABLES.put(key(ident), table);
        return table;
    }

    @Override public Table alterTable(Identifier ident, TableChange... changes) {
        throw new UnsupportedOperationException("ALTER TABLE is not supported by the test catalog");
    }

    @Override public boolean dropTable(Identifier ident) { return TABLES.remove(key(ident)) != null; }

    @Override public void renameTable(Identifier from, Identifier to) {
        MemTable table = TABLES.remove(key(from));
        if (table != null) TABLES.put(key(to), table.renamed(key(to)));
    }

    @Override public String[][] listNamespaces() {
        return NAMESPACES.stream().filter(n -> !n.contains(".")).map(n -> new String[] {n}).toArray(String[][]::new);
    }
    @Override public String[][] listNamespaces(String[] namespace) { return new String[0][]; }
    @Override public Map<String, String> loadNamespaceMetadata(String[] namespace)
            throws org.apache.spark.sql.catalyst.analysis.NoSuchNamespaceException {
        if (!NAMESPACES.contains(String.join(".", namespace)))
            throw new org.apache.spark.sql.catalyst.analysis.NoSuchNamespaceException(namespace);
        return new HashMap<>();
    }
    @Override public void createNamespace(String[] namespace, Map<String, String> metadata) {
        NAMESPACES.add(String.join(".", namespace));
    }
    @Override public void alterNamespace(String[] namespace, NamespaceChange... changes) { }
    @Override public boolean dropNamespace(String[] namespace, boolean cascade) {
        return NAMESPACES.remove(String.join(".", namespace));
    }

    /** One row: its values, the "file" it was written in, and its position (unique in the table). */
    static final class StoredRow {
        final InternalRow values;
        final String file;
        final long pos;
        StoredRow(InternalRow values, String file, long pos) { this.values = values; this.file = file; this.pos = pos; }
    }

    static final class MemTable implements SupportsRead, SupportsWrite, SupportsRowLevelOperations, SupportsMetadataColumns {
        final String key;
        final StructType schema;
        final Map<String, String> properties;
        final List<StoredRow> rows = Collections.synchronizedList(new ArrayList<>());
        final AtomicLong nextPos = new AtomicLong();

        MemTable(String key, StructType schema, Map<String, String> properties) {
            this.key = key; this.schema = schema; this.properties = new HashMap<>(properties);
        }

        MemTable renamed(String newKey) {
            MemTable t = new MemTable(newKey, schema, properties);
            t.rows.addAll(rows);
            t.nextPos.set(nextPos.get());
            return t;
        }

        @Override public String name() { return key; }
        @Override public StructType schema() { return schema; }
        @Override public Map<String, String> properties() { return properties; }
        @Override public Set<TableCapability> capabilities() {
            return EnumSet.of(TableCapability.BATCH_READ, TableCapability.BATCH_WRITE, TableCapability.TRUNCATE);
        }
        @Override public MetadataColumn[] metadataColumns() {
            return new MetadataColumn[] {new Meta("_file", DataTypes.StringType), new Meta("_pos", DataTypes.LongType)};
        }
        @Override public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) { return new MemScanBuilder(this); }
        @Override public WriteBuilder newWriteBuilder(LogicalWriteInfo info) { return new AppendBuilder(key); }

        @Override public RowLevelOperationBuilder newRowLevelOperationBuilder(RowLevelOperationInfo info) {
            boolean delta = "merge-on-read".equals(properties.getOrDefault("write.mode", "copy-on-write"));
            return () -> delta ? new DeltaOperation(this, info.command()) : new CopyOnWriteOperation(this, info.command());
        }

        /** Rows of a write that started from ``replaced`` (null: append), committed in the driver. */
        synchronized void commit(List<Object[]> staged, boolean replaceAll) {
            String file = "file-" + UUID.randomUUID();
            if (replaceAll) rows.clear();
            Set<Long> deleted = new HashSet<>();
            List<StoredRow> added = new ArrayList<>();
            for (Object[] op : staged) {
                String kind = (String) op[0];
                if (kind.equals("insert")) added.add(new StoredRow((InternalRow) op[1], file, nextPos.getAndIncrement()));
                else if (kind.equals("delete")) deleted.add((Long) op[1]);
                else if (kind.equals("update")) {
                    deleted.add((Long) op[1]);
                    added.add(new StoredRow((InternalRow) op[2], file, nextPos.getAndIncrement()));
                }
            }
            rows.removeIf(r -> deleted.contains(r.pos));
            rows.addAll(added);
        }
    }

    static final class Meta implements MetadataColumn {
        final String name; final DataType type;
        Meta(String name, DataType type) { this.name = name; this.type = type; }
        @Override public String name() { return name; }
        @Override public DataType dataType() { return type; }
        @Override public boolean isNullable() { return false; }
    }

    // -- reading -------------------------------------------------------------------------------------

    static final class MemScanBuilder implements SupportsPushDownRequiredColumns, Scan, Batch {
        final MemTable table;
        StructType required;
        MemScanBuilder(MemTable table) { this.table = table; this.required = table.schema; }
        @Override public void pruneColumns(StructType requiredSchema) { this.required = requiredSchema; }
        @Override public Scan build() { return this; }
        @Override public StructType readSchema() { return required; }
        @Override public Batch toBatch() { return this; }
        @Override public InputPartition[] planInputPartitions() {
            return new InputPartition[] {new Part(table.key, required.fieldNames())};
        }
        @Override public PartitionReaderFactory createReaderFactory() { return new ReaderFactory(); }
    }

    static final class Part implements InputPartition {
        final String key; final String[] columns;
        Part(String key, String[] columns) { this.key = key; this.columns = columns; }
    }

    static final class ReaderFactory implements PartitionReaderFactory {
        @Override public PartitionReader<InternalRow> createReader(InputPartition partition) {
            Part part = (Part) partition;
            MemTable table = TABLES.get(part.key);
            List<StoredRow> snapshot;
            synchronized (table.rows) { snapshot = new ArrayList<>(table.rows); }
            Iterator<StoredRow> it = snapshot.iterator();
            return new PartitionReader<InternalRow>() {
                InternalRow current;
                @Override public boolean next() {
                    if (!it.hasNext()) return false;
                    StoredRow row = it.next();
                    Object[] values = new Object[part.columns.length];
                    for (int i = 0; i < values.length; i++) {
                        String c = part.columns[i];
                        if (c.equals("_file")) values[i] = UTF8String.fromString(row.file);
                        else if (c.equals("_pos")) values[i] = row.pos;
                        else {
                            int ordinal = table.schema.fieldIndex(c);
                            values[i] = row.values.get(ordinal, table.schema.fields()[ordinal].dataType());
                        }
                    }
                    current = new GenericInternalRow(values);
                    return true;
                }
                @Override public InternalRow get() { return current; }
                @Override public void close() { }
            };
        }
    }

    // -- writing -------------------------------------------------------------------------------------

    /** INSERT INTO (and the rows of a copy-on-write rewrite): each row an insert. */
    static final class AppendBuilder implements SupportsTruncate, Write, BatchWrite {
        final String key; boolean replaceAll; final String writeId = UUID.randomUUID().toString();
        AppendBuilder(String key) { this(key, false); }
        AppendBuilder(String key, boolean replaceAll) { this.key = key; this.replaceAll = replaceAll; }
        @Override public WriteBuilder truncate() { replaceAll = true; return this; }
        @Override public Write build() { return this; }
        @Override public BatchWrite toBatch() { return this; }
        @Override public DataWriterFactory createBatchWriterFactory(PhysicalWriteInfo info) { return new StagingFactory(writeId); }
        @Override public void commit(WriterCommitMessage[] messages) {
            TABLES.get(key).commit(STAGED.getOrDefault(writeId, new ArrayList<>()), replaceAll);
            STAGED.remove(writeId);
        }
        @Override public void abort(WriterCommitMessage[] messages) { STAGED.remove(writeId); }
    }

    static final class Done implements WriterCommitMessage { }

    static final class StagingFactory implements DataWriterFactory, DeltaWriterFactory {
        final String writeId;
        StagingFactory(String writeId) { this.writeId = writeId; }
        @Override public DeltaWriter<InternalRow> createWriter(int partitionId, long taskId) { return new StagingWriter(writeId); }
    }

    /** Stages each row (insert) or delta (delete / update by row id) for the driver's commit. */
    static final class StagingWriter implements DeltaWriter<InternalRow> {
        final List<Object[]> staged;
        StagingWriter(String writeId) { staged = STAGED.computeIfAbsent(writeId, k -> Collections.synchronizedList(new ArrayList<>())); }
        @Override public void write(InternalRow row) { staged.add(new Object[] {"insert", row.copy()}); }
        @Override public void insert(InternalRow row) { write(row); }
        @Override public void delete(InternalRow metadata, InternalRow id) { staged.add(new Object[] {"delete", id.getLong(0)}); }
        @Override public void update(InternalRow metadata, InternalRow id, InternalRow row) {
            staged.add(new Object[] {"update", id.getLong(0), row.copy()});
        }
        @Override public WriterCommitMessage commit() { return new Done(); }
        @Override public void abort() { }
        @Override public void close() { }
    }

    /** Copy-on-write: the operation scans every row and its write replaces the whole table. */
    static final class CopyOnWriteOperation implements RowLevelOperation {
        final MemTable table; final Command command;
        CopyOnWriteOperation(MemTable table, Command command) { this.table = table; this.command = command; }
        @Override public Command command() { return command; }
        @Override public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) { return new MemScanBuilder(table); }
        @Override public WriteBuilder newWriteBuilder(LogicalWriteInfo info) { return new AppendBuilder(table.key, true); }
        @Override public NamedReference[] requiredMetadataAttributes() { return new NamedReference[] {Expressions.column("_file")}; }
    }

    /** Merge-on-read: the write gets deletes, updates and inserts by row id (``_pos``). */
    static final class DeltaOperation implements SupportsDelta {
        final MemTable table; final Command command;
        DeltaOperation(MemTable table, Command command) { this.table = table; this.command = command; }
        @Override public Command command() { return command; }
        @Override public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) { return new MemScanBuilder(table); }
        @Override public NamedReference[] rowId() { return new NamedReference[] {Expressions.column("_pos")}; }
        @Override public NamedReference[] requiredMetadataAttributes() { return new NamedReference[] {Expressions.column("_file")}; }
        @Override public DeltaWriteBuilder newWriteBuilder(LogicalWriteInfo info) {
            String writeId = UUID.randomUUID().toString();
            return new DeltaWriteBuilder() {
                @Override public DeltaWrite build() {
                    return new DeltaWrite() {
                        @Override public DeltaBatchWrite toBatch() {
                            return new DeltaBatchWrite() {
                                @Override public DeltaWriterFactory createBatchWriterFactory(PhysicalWriteInfo i) { return new StagingFactory(writeId); }
                                @Override public void commit(WriterCommitMessage[] messages) {
                                    table.commit(STAGED.getOrDefault(writeId, new ArrayList<>()), false);
                                    STAGED.remove(writeId);
                                }
                                @Override public void abort(WriterCommitMessage[] messages) { STAGED.remove(writeId); }
                            };
                        }
                    };
                }
            };
        }
    }
}

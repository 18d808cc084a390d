/**
 * Schema 13: a release owns exactly its files. A release's files are the remote items whose
 * `download_id` is its download (the feed is the one observer of files), so the intake keeps
 * no copy of them; each surface has its own categories; the feed records when the last
 * catch-up that completed had started, so a release is called complete only from a store
 * that has seen every file its download had when the service said it was done.
 */
export const V13_RELEASES_OWN_FILES = `
-- intakes.files and intakes.file_id go: the remote items with the release's download_id
-- are its files. service_completed_at: when dlsync saw the download completed on the
-- service (its files exist there from then on). content_path: the release's path below the
-- mirror root, fixed when it was reported complete (it does not move afterwards).
ALTER TABLE intakes DROP COLUMN files;
ALTER TABLE intakes DROP COLUMN file_id;
ALTER TABLE intakes ADD COLUMN service_completed_at INTEGER;
ALTER TABLE intakes ADD COLUMN content_path TEXT;
-- directory_category: the category whose folder holds directory (the category when the
-- release was sent; a later category change lists it elsewhere, its files stay).
ALTER TABLE intakes ADD COLUMN directory_category TEXT NOT NULL DEFAULT '';
UPDATE intakes SET directory_category = category;
-- held_by: why a new intake waits: an account cap ('cap', looked at again every minute and
-- whenever a download of the queue ends) or the service's rate limit ('rate_limit', until
-- not_before); NULL when it does not wait.
ALTER TABLE intakes ADD COLUMN held_by TEXT CHECK (held_by IN ('cap', 'rate_limit'));
-- selection_items: a selection stage no policy could answer, as offered (JSON array of
-- {itemId, parentId, name, size, selectable}), kept while it waits for the user's choice;
-- selection_choice: the item the user chose, which the runner sends.
ALTER TABLE intakes ADD COLUMN selection_items TEXT CHECK (selection_items IS NULL OR (json_valid(selection_items) AND json_type(selection_items) = 'array'));
ALTER TABLE intakes ADD COLUMN selection_choice TEXT;
-- service_rate: the service's download rate (bytes/s) from its last two progress readings.
ALTER TABLE intakes ADD COLUMN service_rate REAL NOT NULL DEFAULT 0 CHECK (service_rate >= 0);
CREATE INDEX intakes_download ON intakes (download_id) WHERE download_id IS NOT NULL;

-- intake_categories: categories created through a surface, per surface (qBittorrent's
-- createCategory is not SABnzbd's). Invariants: one row per (surface, name).
CREATE TABLE intake_categories_13 (
  surface TEXT NOT NULL CHECK (surface <> ''),
  name    TEXT NOT NULL CHECK (name <> ''),
  PRIMARY KEY (surface, name)
) STRICT;
INSERT INTO intake_categories_13 (surface, name) SELECT 'qbittorrent', name FROM intake_categories;
DROP TABLE intake_categories;
ALTER TABLE intake_categories_13 RENAME TO intake_categories;

-- feed_state.caught_up_from: when the last catch-up that reached the feed's head started;
-- every item the service held before that moment is in remote_items.
ALTER TABLE feed_state ADD COLUMN caught_up_from TEXT;
`

-- A counter of changes to what grants what (meta.Grants): a transaction that changes a
-- user's or a group's roles, a group's members or a role's permissions, or adds or
-- removes repositories, adds one as it commits, whichever process makes it. The
-- triggers are deferred to the commit and add once per transaction, so the counter's
-- row is locked only while a transaction commits: never while it waits for others'
-- rows, which could deadlock.
CREATE TABLE grant_changes (id INTEGER PRIMARY KEY CHECK (id = 1), n BIGINT NOT NULL);
INSERT INTO grant_changes (id, n) VALUES (1, 0);
CREATE FUNCTION grant_changed() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF current_setting('pith.grant_changed', true) IS DISTINCT FROM txid_current()::text THEN UPDATE grant_changes SET n = n + 1 WHERE id = 1; PERFORM set_config('pith.grant_changed', txid_current()::text, true); END IF; RETURN NULL; END $$;
CREATE CONSTRAINT TRIGGER user_roles_changed AFTER INSERT OR UPDATE OR DELETE ON user_roles DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION grant_changed();
CREATE CONSTRAINT TRIGGER group_roles_changed AFTER INSERT OR UPDATE OR DELETE ON group_roles DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION grant_changed();
CREATE CONSTRAINT TRIGGER group_users_changed AFTER INSERT OR UPDATE OR DELETE ON group_users DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION grant_changed();
CREATE CONSTRAINT TRIGGER role_permissions_changed AFTER INSERT OR UPDATE OR DELETE ON role_permissions DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION grant_changed();
CREATE CONSTRAINT TRIGGER repositories_changed AFTER INSERT OR DELETE ON repositories DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION grant_changed();

-- A counter of changes to what grants what (meta.Grants): every change to a user's or
-- a group's roles, to a group's members or to a role's permissions, and every
-- repository added or removed, adds one, in the transaction that makes it, whichever
-- process makes it.
CREATE TABLE grant_changes (id INTEGER PRIMARY KEY CHECK (id = 1), n BIGINT NOT NULL);
INSERT INTO grant_changes (id, n) VALUES (1, 0);
CREATE TRIGGER user_roles_insert AFTER INSERT ON user_roles BEGIN UPDATE grant_changes SET n = n + 1; END;
CREATE TRIGGER user_roles_update AFTER UPDATE ON user_roles BEGIN UPDATE grant_changes SET n = n + 1; END;
CREATE TRIGGER user_roles_delete AFTER DELETE ON user_roles BEGIN UPDATE grant_changes SET n = n + 1; END;
CREATE TRIGGER group_roles_insert AFTER INSERT ON group_roles BEGIN UPDATE grant_changes SET n = n + 1; END;
CREATE TRIGGER group_roles_update AFTER UPDATE ON group_roles BEGIN UPDATE grant_changes SET n = n + 1; END;
CREATE TRIGGER group_roles_delete AFTER DELETE ON group_roles BEGIN UPDATE grant_changes SET n = n + 1; END;
CREATE TRIGGER group_users_insert AFTER INSERT ON group_users BEGIN UPDATE grant_changes SET n = n + 1; END;
CREATE TRIGGER group_users_update AFTER UPDATE ON group_users BEGIN UPDATE grant_changes SET n = n + 1; END;
CREATE TRIGGER group_users_delete AFTER DELETE ON group_users BEGIN UPDATE grant_changes SET n = n + 1; END;
CREATE TRIGGER role_permissions_insert AFTER INSERT ON role_permissions BEGIN UPDATE grant_changes SET n = n + 1; END;
CREATE TRIGGER role_permissions_update AFTER UPDATE ON role_permissions BEGIN UPDATE grant_changes SET n = n + 1; END;
CREATE TRIGGER role_permissions_delete AFTER DELETE ON role_permissions BEGIN UPDATE grant_changes SET n = n + 1; END;
CREATE TRIGGER repositories_insert AFTER INSERT ON repositories BEGIN UPDATE grant_changes SET n = n + 1; END;
CREATE TRIGGER repositories_delete AFTER DELETE ON repositories BEGIN UPDATE grant_changes SET n = n + 1; END;

-- A caller's roles are looked up by holder: its roles on every object (object_type and
-- object_id empty) on each request, its roles on one object to check it. By the object
-- index alone, the roles on every object were those of every user (10,000 users with
-- one each: 1.7 ms a request); by the unique index, the holder's roles on every object
-- of a type one role at a time.
CREATE INDEX user_roles_holder ON user_roles (user_id, object_type, object_id);
CREATE INDEX group_roles_holder ON group_roles (group_id, object_type, object_id);
